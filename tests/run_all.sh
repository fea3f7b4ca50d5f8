#!/usr/bin/env bash
# Builds popdist and runs every test with one `ctest`:
#   1. `pip install .`: the Python package (popdist._core, popdist._mpi) and the `popdist` command,
#      which the Python suites test;
#   2. the C++ build;
#   3. CTest: unit, CLI, package consumer, MPI under mpirun at 1-4 ranks, fake hosts, the
#      launcher testbeds (popdist run, Slurm, MPICH hydra, network namespaces, torchrun) and the
#      pytest suites (Python.single, Python.mpi.<N>ranks), with one count at the end.
# Usage: bash tests/run_all.sh [build-dir]
# Environment: PYTHON (default python3): the interpreter to install into and test with.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python=${PYTHON:-python3}
jobs=$(nproc)

echo "== pip install . (Python package and the popdist command)"
"$python" -m pip install -q --disable-pip-version-check .

echo "== C++ build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$(command -v "$python")"
cmake --build "$build" -j "$jobs"

echo "== CTest"
# Two tests a processor: most tests wait (for timeouts, launchers, daemons), and at one a processor
# the suite kept this 2-processor machine 31% busy (docs/guide/development.md). A test's PROCESSORS
# still reserves its share of the slots.
ctest --test-dir "$build" --output-on-failure -j "$((2 * jobs))"
