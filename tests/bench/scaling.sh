#!/usr/bin/env bash
# The scaling section: popdist_bench_scaling (popdist) and --raw (MPI_Init_thread) at 1, 2, 4, ...
# instances (oversubscribed on small machines), one JSON line per run, then the table.
#   bash tests/bench/scaling.sh BUILD_DIR [MAX_INSTANCES=64] > scaling.jsonl
set -euo pipefail
build=${1:?usage: scaling.sh BUILD_DIR [MAX_INSTANCES]}
max=${2:-64}
program=$build/tests/bench/popdist_bench_scaling
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_pml=^cm
export OMPI_MCA_rmaps_base_oversubscribe=1
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
for ((n = 1; n <= max; n *= 2)); do
  mpirun --oversubscribe --bind-to none -np "$n" "$program"
  mpirun --oversubscribe --bind-to none -np "$n" "$program" --raw
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
