#!/bin/sh
# Starts a real Slurm cluster on this one machine (root; Debian's slurm-wlm and munge):
# munged, slurmctld and one slurmd per emulated node (Debian's slurmd supports several daemons
# per machine with `slurmd -N <node>`). Each slurmd runs in a UTS namespace whose hostname is
# its node name, so tasks on different nodes see different hostnames, as Open MPI and popdist
# need. Usage: slurm_up.sh [nodes...]   (default n1 n2, the nodes of slurm/slurm.conf)
# Then export SLURM_CONF=<this folder>/slurm/slurm.conf for srun/salloc/sinfo; stop with slurm_down.sh.
set -e
here=$(cd "$(dirname "$0")" && pwd)
conf="${SLURM_CONF:-$here/slurm/slurm.conf}"
export SLURM_CONF="$conf"
nodes="${*:-n1 n2}"
# a fresh cluster restarts job ids at 1, so the previous cluster's state and per-job pmix
# directories must go, or new steps collide with them
rm -rf /var/spool/slurm-mh /tmp/slurm-mh-*
mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge /var/spool/slurm-mh/ctld /run/slurm-mh /var/log/slurm-mh
for n in $nodes; do mkdir -p /var/spool/slurm-mh/d-$n /tmp/slurm-mh-$n; done
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
chmod 600 /etc/munge/munge.key
munge -n >/dev/null 2>&1 || runuser -u munge -- /usr/sbin/munged
/usr/sbin/slurmctld -f "$conf"
for n in $nodes; do
  unshare --uts /bin/sh -c "hostname $n && exec /usr/sbin/slurmd -f '$conf' -N $n"
done
want=$(echo $nodes | wc -w)
i=0
while [ $i -lt 600 ]; do
  idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
  [ "$idle" -ge "$want" ] && { sinfo -N; exit 0; }
  sleep 0.1; i=$((i+1))
done
echo "slurm_up: the nodes are not idle after 60 s; the logs are in /var/log/slurm-mh" >&2
sinfo -N; exit 1
