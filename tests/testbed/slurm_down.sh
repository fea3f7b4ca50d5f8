#!/bin/sh
# Stops the cluster slurm_up.sh started (slurmds, slurmctld, munged) by their pid files, and
# waits for each to exit so that the next slurm_up.sh finds the ports free.
for f in /run/slurm-mh/slurmd-*.pid /run/slurm-mh/slurmctld.pid /run/munge/munged.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f"); kill "$pid" 2>/dev/null && echo "stopped $pid ($f)"
  i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
done
