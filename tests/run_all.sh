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

# The wheel and the C++ build compile the same library, command and bindings. With ccache, the
# C++ build takes the wheel's objects instead of compiling them again, which needs the same
# compiler command in both: the same compiler (scikit-build-core takes Python's sysconfig CC and
# CXX when they are unset), the same build type (Release, the wheel's: the tests run the code
# that ships), the same pybind11 (the installed one, not a build-isolation copy) and build
# directories side by side, so that every path is the same relative to them (CCACHE_BASEDIR).
sysconfig_compiler() { "$python" -c "import sysconfig; print(sysconfig.get_config_var('$1').split()[0])"; }
export CC=${CC:-$(sysconfig_compiler CC)} CXX=${CXX:-$(sysconfig_compiler CXX)}
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
fi
pip_build=(-C "build-dir=$(realpath -m "$build")-wheel")
if "$python" -c "import scikit_build_core, pybind11" 2>/dev/null; then pip_build+=(--no-build-isolation); fi

echo "== pip install . (Python package and the popdist command)"
"$python" -m pip install -q --disable-pip-version-check "${pip_build[@]}" .

echo "== C++ build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v "$python")"
cmake --build "$build" -j "$jobs"

echo "== CTest"
# Two tests a processor: most tests wait (for timeouts, launchers, daemons), and at one a processor
# the suite kept this 2-processor machine 31% busy (docs/guide/development.md). A test's PROCESSORS
# still reserves its share of the slots.
ctest --test-dir "$build" --output-on-failure -j "$((2 * jobs))"
