#!/usr/bin/env bash
# Runs every Python suite of popdist:
#   1. single process: tests/python/test_*.py (no launcher; env-driven getters in subprocesses),
#      and tests/python/launch/ (jobs started with mpirun: examples, popdist-first, abort hook);
#   2. multi-rank: tests/python/mpi under `mpirun -n N python -m mpi4py -m pytest` for N = 2, 3, 4.
#
# Usage: bash tests/python/run.sh [--install] [--build-tree BUILD_DIR]
#   (default)          test the installed package (`pip install .` done beforehand)
#   --install          run `pip install .` first
#   --build-tree DIR   test a CMake build tree configured with -DPOPDIST_BUILD_PYTHON=ON instead
#                      (PYTHONPATH=DIR/bindings, the CLI from DIR/tools)
# Environment: PYTHON (default python3), PYTEST_ARGS (extra pytest arguments).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
install=0
build_tree=""
while (($#)); do
  case "$1" in
    --install) install=1 ;;
    --build-tree) build_tree=$(cd "$2" && pwd); shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if ((install)); then
  "$python" -m pip install --disable-pip-version-check "$root"
fi
if [[ -n "$build_tree" ]]; then
  export PYTHONPATH="$build_tree/bindings${PYTHONPATH:+:$PYTHONPATH}"
  [[ -x "$build_tree/tools/popdist" ]] && export POPDIST_CLI="$build_tree/tools/popdist"
else
  # The command `pip install .` put beside this interpreter's scripts: pyenv's shims only learn
  # of a new script on `pyenv rehash`, so PATH alone may not find it on a fresh machine.
  scripts=$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  [[ -x "$scripts/popdist" ]] && export POPDIST_CLI="$scripts/popdist"
fi
# Run from outside the source tree so that `import popdist` means the package under test.
cd "$(mktemp -d)"
trap 'rm -rf "$PWD"' EXIT
if ! "$python" -c "import popdist" 2>/dev/null; then
  echo "run.sh: cannot import popdist; run 'pip install .' (or pass --install / --build-tree DIR)" >&2
  exit 1
fi

export PYTHONPATH=${PYTHONPATH:-}  # forwarded to every rank with -x
# The environment every mpirun needs here (as cmake/PopdistTesting.cmake's popdist_mpi_environment).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_pml=^cm
export OMPI_MCA_rmaps_base_oversubscribe=1

pytest=("$python" -m pytest -c "$root/pyproject.toml" --rootdir "$root" -p no:cacheprovider --color=no ${PYTEST_ARGS:-})

echo "== popdist Python: single-process and mpirun-launched suites"
"${pytest[@]}" "$root/tests/python"

for ranks in 2 3 4; do
  echo "== popdist Python: multi-rank suite at $ranks ranks"
  # --capture=sys keeps fd 2 real, so a failing rank's report and the watchdog's stack dumps show;
  # the outer timeout is the last line of defence against a hang.
  timeout 300 mpirun -np "$ranks" --oversubscribe --bind-to none -x PYTHONPATH \
    "${pytest[@]:0:1}" -m mpi4py "${pytest[@]:1}" --capture=sys "$root/tests/python/mpi"
done
echo "== popdist Python: all suites passed"
