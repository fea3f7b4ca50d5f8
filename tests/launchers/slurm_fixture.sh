#!/bin/sh
# CTest fixture for the Slurm testbed: `slurm_fixture.sh up <testbed>` starts a fresh 2-node
# cluster (n1, n2), `slurm_fixture.sh down <testbed>` stops it (always, even after failures).
# Exit 77 (skip) names what is missing. Uses the testbed's scripts; copies nothing.
action="$1"; testbed="$2"
export SLURM_CONF="$testbed/slurm/slurm.conf"
case "$action" in
  up)
    [ -x "$testbed/slurm_up.sh" ] || { echo "SKIP: the Slurm testbed $testbed/slurm_up.sh is absent"; exit 77; }
    [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && command -v munge >/dev/null \
      || { echo "SKIP: Slurm or munge is not installed (apt-get install slurm-wlm munge; .ci/install-deps)"; exit 77; }
    # a cluster left over by an interrupted run would hold the ports: stop it first
    "$testbed/slurm_down.sh" >/dev/null 2>&1
    exec "$testbed/slurm_up.sh" ;;
  down)
    [ -x "$testbed/slurm_down.sh" ] || exit 0
    "$testbed/slurm_down.sh"
    exit 0 ;;
  *) echo "usage: $0 up|down <testbed>" >&2; exit 2 ;;
esac
