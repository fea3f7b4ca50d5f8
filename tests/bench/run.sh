#!/usr/bin/env bash
# Builds and runs the whole benchmark suite and prints one table of figures, ratios and
# targets. Takes a few minutes; needs nothing beyond the project's own dependencies (PyTorch is
# optional: its row is skipped with a note when it is absent).
#
#   bash tests/bench/run.sh [--pip-install] [build-dir]     (default build dir: build-bench)
#
# - the C++ benchmarks are built in Release in a build dir of their own;
# - the Python benchmarks use the installed package (`pip install .`); it is installed here if
#   `import popdist._mpi` fails, or always with --pip-install (do that after changing the sources);
# - every in-MPI benchmark runs at 2 and 4 ranks (4 is oversubscribed on a 2-core machine);
# - raw results go to <build-dir>/bench-results.jsonl (JSON lines), the table to stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."

pip_install=0
if [[ ${1:-} == --pip-install ]]; then
  pip_install=1
  shift
fi
build=${1:-build-bench}
results=$build/bench-results.jsonl
rank_counts=(2 4)
# The running interpreter, never a pyenv shim (a shell script that would dominate start-up times):
# sys.executable is the interpreter the shim started. Not its realpath: inside a venv that is the
# base interpreter, which neither sees the venv's packages nor should get `pip install .`.
python=$(python3 -c 'import sys; print(sys.executable)')

# Open MPI as root, loopback only, ranks that yield when oversubscribed, and no probing for
# fabrics a single host lacks (pml ^cm saves ~200 ms per start; see design.md §8).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_pml=^cm
export OMPI_MCA_rmaps_base_oversubscribe=1
mpirun=(mpirun --oversubscribe --bind-to none)
# A default timeout would make every synchronize() the timed kind; logging would time spdlog.
unset POPDIST_SYNC_TIMEOUT POPDIST_LOG_LEVEL

echo "== build (Release, $build)" >&2
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOPDIST_BUILD_BENCHMARKS=ON \
  -DPOPDIST_BUILD_TESTS=OFF -DPOPDIST_BUILD_EXAMPLES=OFF -DPOPDIST_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" --target popdist_benchmarks -j 2 >&2
bench=$build/tests/bench

if ((pip_install)) || ! "$python" -c "import popdist._mpi" 2>/dev/null; then
  echo "== pip install . (the Python package the Python benchmarks use)" >&2
  "$python" -m pip install -q --disable-pip-version-check .
fi

# Which package the Python figures are of (a stale install is the usual surprise).
package=$("$python" -c 'import os, time, popdist, popdist._mpi as m
print(os.path.dirname(popdist.__file__), "built", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(m.__file__))))')
printf '{"meta": {"date": "%s", "nproc": %d, "loadavg": "%s", "python": "%s", "package": "%s"}}\n' \
  "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$python" "$package" >"$results"

failures=0
# Runs one benchmark, appending its JSON lines; a failing benchmark leaves "no figure" rows in
# the table and a message here, and the others still run.
step() {
  local name=$1
  shift
  echo "== $name" >&2
  local status=0 started=$SECONDS
  timeout 300 "$@" >>"$results" || status=$?
  echo "   ($((SECONDS - started)) s)" >&2
  if ((status)); then
    echo "run.sh: $name failed (exit $status); its rows will say 'no figure'" >&2
    failures=$((failures + 1))
  fi
}

for n in "${rank_counts[@]}"; do
  step "C++ runtime, $n ranks" "${mpirun[@]}" -np "$n" "$bench/popdist_bench_runtime"
  # Few first-time registrations per process (each set only once): pool several runs.
  runs=$((n == 2 ? 6 : 2))
  for ((i = 0; i < runs; ++i)); do
    step "C++ first registration, $n ranks, run $((i + 1))/$runs" "${mpirun[@]}" -np "$n" "$bench/popdist_bench_first_registration"
  done
  step "Python, $n ranks" "${mpirun[@]}" -np "$n" "$python" tests/bench/bench_python.py
done
step "whole processes" "$python" tests/bench/bench_processes.py --bench-dir "$bench" --cli "$build/tools/popdist" \
  --python "$python"

echo >&2
"$python" tests/bench/report.py "$results"
if ((failures)); then
  echo "run.sh: $failures benchmark step(s) failed (see above)" >&2
  exit 1
fi
