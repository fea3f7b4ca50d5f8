#!/bin/sh
# CTest fixture for the Slurm testbed (tests/testbed): `slurm_fixture.sh up <testbed>` takes the
# testbeds' machine-wide lock (testbed_lock.py: another build tree's run may be using them; then
# this waits) and starts a fresh 2-node cluster (n1, n2); `slurm_fixture.sh down <testbed>` stops
# it (always, even after failures) and gives the lock back -- only when this run took it, so that
# it never stops another run's cluster. Exit 77 (skip) names what the machine lacks.
action="$1"; testbed="$2"
export SLURM_CONF="$testbed/slurm/slurm.conf"
# The run is the process that started this script (CTest).
lock() { python3 "$testbed/testbed_lock.py" "$1" slurm --run "$PPID"; }
case "$action" in
  up)
    [ "$(id -u)" = 0 ] || { echo "SKIP: not root: the Slurm testbed starts munged, slurmctld and slurmd"; exit 77; }
    [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && command -v munge >/dev/null \
      || { echo "SKIP: Slurm or munge is not installed (apt-get install slurm-wlm munge; .ci/install-deps)"; exit 77; }
    command -v unshare >/dev/null && unshare --uts true 2>/dev/null \
      || { echo "SKIP: this machine cannot create UTS namespaces (unshare --uts), which give each node its hostname"; exit 77; }
    lock take || exit 1
    # a cluster left over by an interrupted run would hold the ports: stop it first
    "$testbed/slurm_down.sh" >/dev/null 2>&1
    exec "$testbed/slurm_up.sh" ;;
  down)
    if lock holds; then
      "$testbed/slurm_down.sh"
      lock release
    else
      echo "the Slurm cluster is not this run's (its setup did not take it): left as it is"
    fi
    exit 0 ;;
  *) echo "usage: $0 up|down <testbed>" >&2; exit 2 ;;
esac
