#!/usr/bin/env bash
# Runs every Python suite of popdist:
#   1. single process: tests/python/test_*.py (no launcher; env-driven getters in subprocesses),
#      and tests/python/mpirun_jobs/ (jobs started with mpirun: examples, popdist-first, abort
#      hook, interrupts);
#   2. popdist.torch and popdist.lightning: tests/python/torch (single processes, and torch jobs
#      the tests start with mpirun, popdist run and torchrun themselves), in two parts: the
#      launched training jobs and departures (torch_jobs, the longest files), and the rest;
#   3. multi-rank: tests/python/mpi under `mpirun -n N python -m mpi4py -m pytest` for N = 2, 3, 4;
#   4. popdist.launch: tests/python/launch (jobs started from Python, a notebook in a real kernel).
#
# Usage: bash tests/python/run.sh [--install] [--build-tree BUILD_DIR] [--suite single|quick|torch|torch_jobs|mpi:N|launch]
#   (default)          test the installed package (`pip install .` done beforehand)
#   --install          run `pip install .` first
#   --build-tree DIR   test a CMake build tree configured with -DPOPDIST_BUILD_PYTHON=ON instead
#                      (PYTHONPATH=DIR/bindings, the CLI from DIR/tools)
#   --suite S          one suite only: `single` (1.), `torch` or `torch_jobs` (2.), `mpi:N` (3. at
#                      N ranks), `launch` (4.), or `quick` (a few pure files of 1., for the quick
#                      loop, ctest -L quick); CTest runs each as its own test (Python.single,
#                      Python.torch, Python.torch_jobs, Python.mpi.Nranks, Python.launch),
#                      so that they run side by side. Exit 77 when popdist
#                      is not importable, so that CTest reports a skip naming the cause.
# Environment: PYTHON (default python3), PYTEST_ARGS (extra pytest arguments).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
install=0
build_tree=""
suite=all
while (($#)); do
  case "$1" in
    --install) install=1 ;;
    --build-tree) build_tree=$(cd "$2" && pwd); shift ;;
    --suite) suite=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if ((install)); then
  "$python" -m pip install --disable-pip-version-check "$root"
fi
if [[ -n "$build_tree" ]]; then
  export PYTHONPATH="$build_tree/bindings${PYTHONPATH:+:$PYTHONPATH}"
  [[ -x "$build_tree/tools/popdist" ]] && export POPDIST_CLI="$build_tree/tools/popdist" PATH="$build_tree/tools:$PATH"
else
  # The command `pip install .` put beside this interpreter's scripts: pyenv's shims only learn
  # of a new script on `pyenv rehash`, so PATH alone may not find it on a fresh machine.
  scripts=$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  # On PATH too: tests that clear POPDIST_* variables still find it there (a venv's bin is not
  # on PATH unless activated).
  [[ -x "$scripts/popdist" ]] && export POPDIST_CLI="$scripts/popdist" PATH="$scripts:$PATH"
fi
# Run from outside the source tree so that `import popdist` means the package under test.
cd "$(mktemp -d)"
trap 'rm -rf "$PWD"' EXIT
if ! "$python" -c "import popdist" 2>/dev/null; then
  echo "SKIP: $python cannot import popdist; run '$python -m pip install .' (or pass --install / --build-tree DIR)" >&2
  [[ $suite == all ]] && exit 1
  exit 77
fi

export PYTHONPATH=${PYTHONPATH:-}  # forwarded to every rank with -x
# The environment every mpirun needs here (as cmake/PopdistTesting.cmake's popdist_mpi_environment).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_pml=^cm
export OMPI_MCA_rmaps_base_oversubscribe=1

pytest=("$python" -m pytest -c "$root/pyproject.toml" --rootdir "$root" -p no:cacheprovider --color=no ${PYTEST_ARGS:-})

single_suite() {
  echo "== popdist Python: single-process and mpirun-launched suites"
  "${pytest[@]}" --ignore "$root/tests/python/torch" --ignore "$root/tests/python/launch" "$root/tests/python"
}
# The quick loop's share (ctest -L quick): the pure tests of the package, a few seconds.
quick=(test_import.py test_module_stubs.py test_module_boundaries.py test_getters.py test_topology_object.py
       test_arguments.py test_grouping.py)
quick_suite() {
  echo "== popdist Python: the quick loop's pure tests"
  "${pytest[@]}" "${quick[@]/#/$root/tests/python/}"
}
launch_suite() {
  echo "== popdist Python: popdist.launch"
  "${pytest[@]}" "$root/tests/python/launch"
}
# The torch jobs' two longest files, a suite of their own so that neither part nears CTest's
# timeout on a loaded machine.
torch_jobs=("$root/tests/python/torch/test_torch_launched.py" "$root/tests/python/torch/test_torch_departures.py")
torch_suite() {
  echo "== popdist Python: popdist.torch and popdist.lightning"
  "${pytest[@]}" "${torch_jobs[@]/#/--ignore=}" "$root/tests/python/torch"
}
torch_jobs_suite() {
  echo "== popdist Python: popdist.torch training jobs and departures"
  "${pytest[@]}" "${torch_jobs[@]}"
}
mpi_suite() {
  echo "== popdist Python: multi-rank suite at $1 ranks"
  # --capture=sys keeps fd 2 real, so a failing rank's report and the watchdog's stack dumps show;
  # the outer timeout is the last line of defence against a hang.
  timeout 300 mpirun -np "$1" --oversubscribe --bind-to none -x PYTHONPATH \
    "${pytest[@]:0:1}" -m mpi4py "${pytest[@]:1}" --capture=sys "$root/tests/python/mpi"
}
case "$suite" in
  all) single_suite; torch_suite; torch_jobs_suite; launch_suite; for ranks in 2 3 4; do mpi_suite "$ranks"; done
       echo "== popdist Python: all suites passed" ;;
  single) single_suite ;;
  quick) quick_suite ;;
  torch) torch_suite ;;
  torch_jobs) torch_jobs_suite ;;
  launch) launch_suite ;;
  mpi:[1-9]) mpi_suite "${suite#mpi:}" ;;
  *) echo "run.sh: --suite '$suite' is not 'single', 'quick', 'torch', 'torch_jobs', 'launch' or 'mpi:N' with N in 1-9" >&2; exit 2 ;;
esac
