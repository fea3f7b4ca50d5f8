#!/usr/bin/env bash
# Builds popdist and runs every test: the C++ suites under CTest (unit, CLI, package consumer,
# MPI under mpirun at 1-4 ranks, launcher testbeds) and the Python suites (pytest, single
# process and under mpirun). Usage: bash tests/run_all.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
