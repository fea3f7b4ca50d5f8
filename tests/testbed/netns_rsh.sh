#!/bin/sh
# Open MPI's plm_rsh_agent for network-namespace hosts (netns_setup.sh): runs the command inside
# network namespace <host> (`ip netns exec` also bind-mounts /etc/netns/<host>/hosts, so h1..hN
# resolve) and a new UTS namespace named <host>, with an environment scrubbed as ssh would
# (FAKE_RSH_KEEP_ENV=1 keeps it).
#   called as:  netns_rsh.sh [ssh options] <host> <command words...>
while [ $# -gt 0 ]; do
  case "$1" in
    -[lpioFJ]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host="$1"; shift
envcmd="env -i PATH=$PATH HOME=${HOME:-/root}"
[ "${FAKE_RSH_KEEP_ENV:-0}" = 1 ] && envcmd="env"
exec $envcmd ip netns exec "$host" unshare --uts /bin/sh -c "hostname '$host' && exec $*"
