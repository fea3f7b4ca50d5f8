#!/bin/sh
# Open MPI's plm_rsh_agent (and hydra's -launcher-exec) for fake hosts: instead of ssh-ing to
# <host>, runs the command on this machine as if it were <host>.
#   called as:  fake_rsh.sh [ssh options] <host> <command words...>
# Why each step:
#  - a new UTS namespace with hostname <host>: Open MPI and popdist tell hosts apart by hostname,
#    so each fake host must have its own (FAKE_RSH_UTS=0 turns this off);
#  - its own TMPDIR, session dir and shared-memory backing dir: otherwise the daemons of two fake
#    hosts race on /tmp/ompi.<hostname>.<uid>/... ("File exists") and their vader segments
#    collide (segfaults);
#  - a scrubbed environment, as ssh gives: only `mpirun -x VAR` reaches the ranks, as on a real
#    cluster (FAKE_RSH_KEEP_ENV=1 keeps the caller's environment).
#  - the command run by a shell, as sshd runs it: Open MPI 5's is a sequence
#    (`PRTE_PREFIX=...;export PRTE_PREFIX;...prted ...`), not one program (sh still execs the
#    last command in place).
while [ $# -gt 0 ]; do
  case "$1" in
    -[lpioFJ]) shift 2 ;;   # ssh options with a value
    -*) shift ;;            # ssh flags (-x, -T, ...)
    *) break ;;
  esac
done
host="$1"; shift
tmp="${TMPDIR:-/tmp}/fakehost.$host"
mkdir -p "$tmp"
envcmd="env -i PATH=$PATH HOME=${HOME:-/root}"
[ "${FAKE_RSH_KEEP_ENV:-0}" = 1 ] && envcmd="env"
if [ "${FAKE_RSH_UTS:-1}" = 1 ]; then
  exec $envcmd TMPDIR="$tmp" OMPI_MCA_orte_tmpdir_base="$tmp" OMPI_MCA_btl_vader_backing_directory="$tmp" \
    unshare --uts /bin/sh -c "hostname '$host' || exit 1; $*"
fi
exec $envcmd TMPDIR="$tmp" OMPI_MCA_orte_tmpdir_base="$tmp" OMPI_MCA_btl_vader_backing_directory="$tmp" \
  /bin/sh -c "$*"
