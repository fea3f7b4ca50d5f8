#!/bin/sh
# A node of the Slurm testbed fails and comes back: `slurm_node.sh kill <node>` SIGKILLs every
# process of that node (its slurmd, slurmstepds, Open MPI daemon, instances: everything in the
# UTS namespace slurm_up.sh gave its slurmd), as a node that loses power would lose them;
# `slurm_node.sh kill-daemons <node>` kills only its slurmd and slurmstepds (its jobs' processes run
# on, until Slurm declares the node DOWN); `slurm_node.sh start <node>` starts its slurmd again
# (ReturnToService=2 puts it back in service).
# SLURM_CONF names the cluster (default: this folder's slurm/slurm.conf).
set -e
here=$(cd "$(dirname "$0")" && pwd)
conf="${SLURM_CONF:-$here/slurm/slurm.conf}"
action="$1"; node="$2"
[ -n "$node" ] || { echo "usage: $0 kill|kill-daemons|start <node>" >&2; exit 2; }
pid_file=$(sed -n 's/^SlurmdPidFile=//p' "$conf" | sed "s/%n/$node/")
case "$action" in
  kill|kill-daemons)
    pid=$(cat "$pid_file" 2>/dev/null) && namespace=$(readlink "/proc/$pid/ns/uts") \
      || { echo "slurm_node: no slurmd of node $node is running (pid file $pid_file)" >&2; exit 1; }
    # stop them all first, so that none reacts to another's death before it dies itself
    members=""
    for proc in /proc/[0-9]*; do
      [ "$(readlink "$proc/ns/uts" 2>/dev/null)" = "$namespace" ] || continue
      [ "$action" = kill ] || grep -qx 'slurmd\|slurmstepd' "$proc/comm" 2>/dev/null || continue
      members="$members ${proc#/proc/}"
    done
    kill -STOP $members 2>/dev/null || true
    kill -KILL $members 2>/dev/null || true
    echo "slurm_node: killed node $node:$members" ;;
  start)
    unshare --uts /bin/sh -c "hostname $node && exec /usr/sbin/slurmd -f '$conf' -N $node" ;;
  *) echo "usage: $0 kill|kill-daemons|start <node>" >&2; exit 2 ;;
esac
