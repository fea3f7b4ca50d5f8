#!/usr/bin/env bash
# The scale table (tests/bench/README.md, "Simulated clusters"): popdist's collective steps next
# to MPI's own, in SimGrid SMPI, at N simulated instances on the fat tree and on the 64 x 64
# multi-core cluster, with and without skewed arrivals. One command:
#
#   bash tests/scale/run_simulated.sh [--build DIR] [--sizes "2 16 128 1024 4096 16384"]
#                                     [--skew SECONDS] [--no-cluster] [--cluster-nodes K] [--limit SECONDS]
#                                     [--out FILE] [--probe "ARGUMENTS"]
#
# Builds the simulation tree (DIR, default build-smpi: cmake -DPOPDIST_SIMULATION=ON) if needed,
# runs tests/scale/scale_probe under smpirun for every N (unskewed, then with arrivals spread over
# --skew seconds, default 1; --skew 0 runs only the unskewed), appends the probe's JSON lines
# with the simulation's own wall time to FILE (default DIR/scale.jsonl) and prints the table
# (report_simulated.py). A run that takes
# longer than --limit seconds of real time (default 1800) is stopped and reported as unfinished.
# --cluster-nodes K runs the multi-core cluster on its first K nodes (K x 64 ranks, default 64):
# the same links and backbone at a size whose simulation takes minutes, not half an hour.
# --probe passes its words to every run of the probe (e.g. "--quick --last register_all").
#
# SMPI settings, stated with every table: computation between MPI calls is not simulated
# (smpi/simulate-computation:no: the figures are the network model's, reproducible on a busy
# machine); MPI_Test and MPI_Iprobe cost 1 us each (smpi/test, smpi/iprobe), every time
# (smpi/grow-injected-times:no: SMPI's default doubles that cost on each unsuccessful call in a
# row, which made a timed synchronize at 128 ranks 55x MPI_Barrier instead of 6x); globals privatized
# per rank (dlopen, smpirun's default); 256 KiB stacks per simulated rank; MPI_Allgather and
# MPI_Allgatherv by recursive doubling (smpi/allgather:rdb, smpi/allgatherv:mpich_rdb: SMPI's
# default for both is all-to-all, which takes minutes of real time at 256 ranks); MPI_Barrier by
# recursive doubling (smpi/barrier:ompi_recursivedoubling: SMPI's default is linear, rank 0 hearing
# from all and answering all, two latencies at any N since SMPI charges nothing per message, a
# baseline no real library has at scale); the other collectives with SMPI's defaults.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build-smpi
sizes="2 16 128 1024 4096 16384"
skew=1
cluster=1
cluster_nodes=64
limit=1800
out=
probe_args=()
while (($#)); do
  case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --skew) skew=$2; shift 2 ;;
    --no-cluster) cluster=0; shift ;;
    --cluster-nodes) cluster_nodes=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --probe) read -r -a probe_args <<<"$2"; shift 2 ;;
    *) echo "run_simulated.sh: unknown argument '$1'; expected --build, --sizes, --skew, --no-cluster, --cluster-nodes, --limit, --out, --probe" >&2
       exit 2 ;;
  esac
done
out=${out:-$build/scale.jsonl}
command -v smpirun >/dev/null || { echo "run_simulated.sh: smpirun not found: install libsimgrid-dev (SimGrid SMPI)" >&2; exit 1; }
if [[ ! -x $build/tests/scale/popdist_scale_probe ]]; then
  cmake -S "$root" -B "$build" -DPOPDIST_SIMULATION=ON >/dev/null
  cmake --build "$build" -j2 --target popdist_scale_probe >/dev/null
fi
probe=$build/tests/scale/popdist_scale_probe
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
smpi_settings=(--cfg=smpi/simulate-computation:no --cfg=smpi/test:1e-6 --cfg=smpi/iprobe:1e-6
               --cfg=smpi/grow-injected-times:no
               --cfg=smpi/allgather:rdb --cfg=smpi/allgatherv:mpich_rdb --cfg=smpi/barrier:ompi_recursivedoubling
               --cfg=contexts/stack-size:256 --log=root.thres:critical)

# run <label> <platform> <hostfile> <ranks> [probe arguments...]
run() {
  local label=$1 platform=$2 hostfile=$3 ranks=$4
  shift 4
  local log=$work/run.log start end status=0
  start=$(date +%s.%N)
  timeout "$limit" smpirun -np "$ranks" -platform "$platform" -hostfile "$hostfile" "${smpi_settings[@]}" \
    "$probe" "${probe_args[@]}" "$@" >"$work/out.jsonl" 2>"$log" || status=$?
  end=$(date +%s.%N)
  local wall
  wall=$(python3 -c "print(round($end - $start, 1))")
  if ((status == 0)); then
    local skewed_run=false
    [[ " $* " == *" --skew "* ]] && skewed_run=true
    sed "s/^{/{\"platform\": \"$label\", \"wall_s\": $wall, \"skewed_run\": $skewed_run, /" "$work/out.jsonl" >>"$out"
    echo "  $label N=$ranks $*: done in $wall s" >&2
  else
    echo "{\"platform\": \"$label\", \"n\": $ranks, \"args\": \"$*\", \"unfinished\": true, \"status\": $status, \"wall_s\": $wall}" >>"$out"
    echo "  $label N=$ranks $*: unfinished (status $status after $wall s); last lines:" >&2
    tail -n 3 "$log" >&2 || true
  fi
}

: >"$out"
for n in $sizes; do
  for ((i = 0; i < n; ++i)); do echo "node-$i"; done >"$work/fattree.hosts"
  run fat_tree "$here/platforms/fat_tree_16384.xml" "$work/fattree.hosts" "$n"
  if [[ $skew != 0 ]]; then
    run fat_tree "$here/platforms/fat_tree_16384.xml" "$work/fattree.hosts" "$n" --skew "$skew"
  fi
done
if ((cluster)); then
  for ((i = 0; i < cluster_nodes; ++i)); do echo "host-$i:64"; done >"$work/cluster.hosts"
  run cluster_64x64 "$here/platforms/cluster_64x64.xml" "$work/cluster.hosts" $((cluster_nodes * 64))
  if [[ $skew != 0 ]]; then
    run cluster_64x64 "$here/platforms/cluster_64x64.xml" "$work/cluster.hosts" $((cluster_nodes * 64)) --skew "$skew"
  fi
fi
python3 "$here/report_simulated.py" "$out"
