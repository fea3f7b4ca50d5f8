#!/bin/sh
# Open MPI's plm_rsh_agent for network-namespace hosts (netns_setup.sh) that share NO temporary
# directory with the launching host, as on a cluster whose /tmp is node-local: netns_rsh.sh plus
# a mount namespace in which each directory named in NETNS_PRIVATE_DIRS (colon-separated; default
# /tmp) is a fresh tmpfs on that host. The rest of the file system (binaries, the job's scripts,
# --log-dir) stays shared, as an NFS home would be: make the launcher's TMPDIR a directory of its
# own and name only that one.
#   called as:  netns_private_rsh.sh [ssh options] <host> <command words...>
while [ $# -gt 0 ]; do
  case "$1" in
    -[lpioFJ]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host="$1"; shift
mounts=""
old_ifs=$IFS; IFS=:
for d in ${NETNS_PRIVATE_DIRS:-/tmp}; do mounts="$mounts mkdir -p '$d' && mount -t tmpfs -o size=256m,mode=1777 private '$d' &&"; done
IFS=$old_ifs
exec env -i PATH="$PATH" HOME="${HOME:-/root}" ip netns exec "$host" unshare --uts --mount --propagation private \
  /bin/sh -c "hostname '$host' &&$mounts exec $*"
