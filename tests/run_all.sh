#!/usr/bin/env bash
# Builds popdist and runs every test:
#   1. `pip install .`: the Python package (popdist._core, popdist._mpi) and the `popdist` command;
#   2. the C++ build and CTest: unit, CLI, package consumer, MPI under mpirun at 1-4 ranks,
#      fake hosts, and the launcher testbeds (popdist run, Slurm, MPICH hydra);
#   3. the Python suites: pytest single-process, then under mpirun at 2, 3 and 4 ranks.
# Usage: bash tests/run_all.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=$(nproc)

echo "== pip install . (Python package and the popdist command)"
python3 -m pip install -q --disable-pip-version-check .

echo "== C++ build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$jobs"

echo "== CTest"
ctest --test-dir "$build" --output-on-failure -j "$jobs"

echo "== pytest"
bash tests/python/run.sh
