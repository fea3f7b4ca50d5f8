#!/bin/sh
# init() and synchronize() with a full /dev/shm (issue 37): a private mount namespace with a 4 KiB
# tmpfs on /dev/shm, filled, then `mpirun -np RANKS PROGRAM`. The host barrier's shared memory
# cannot be made, so every instance must agree on MPI_Barrier instead, say so naming /dev/shm,
# pass PROGRAM's barriers and leave nothing in /dev/shm. (Open MPI's own MPI_Win_allocate_shared
# failed there on the leader only, and init() hung.)
# Usage: shm_full.sh <mpirun> <ranks> <program> [args...]
set -u
mpirun=$1 ranks=$2
shift 2
if [ "$(id -u)" = 0 ]; then
  unshare="unshare --mount"
elif unshare --user --map-root-user --mount true 2>/dev/null; then
  unshare="unshare --user --map-root-user --mount"
else
  echo "SKIP: cannot mount a tmpfs on /dev/shm (not root, and no unprivileged user namespaces)"
  exit 77
fi
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
# The bound of "it ended": seconds for a job that runs in about two.
$unshare sh -c '
  mount -t tmpfs -o size=4k tmpfs /dev/shm || exit 77
  head -c 65536 /dev/zero > /dev/shm/full 2>/dev/null
  timeout 60 "$@"; status=$?
  left=$(ls /dev/shm | grep -c "^popdist-")
  echo "popdist segments left in /dev/shm: $left"
  exit $status' sh "$mpirun" -np "$ranks" --oversubscribe --bind-to none "$@" >"$out" 2>&1
status=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$status" = 77 ] && { echo "SKIP: mounting a tmpfs on /dev/shm was refused"; exit 77; }
[ "$status" = 124 ] && fail "the job did not end within 60 s (init() or synchronize() hung)"
[ "$status" = 0 ] || fail "exit status $status"
grep -q "popdist segments left in /dev/shm: 0" "$out" || fail "a segment of popdist's was left in /dev/shm"
fallbacks=$(grep -c "synchronize() over all instances uses MPI_Barrier instead" "$out")
[ "$fallbacks" = "$ranks" ] || fail "$fallbacks instances of $ranks said they use MPI_Barrier instead"
grep -q "posix_fallocate of /dev/shm/popdist-[^ ]* failed: No space left on device" "$out" ||
  fail "no warning names the full /dev/shm"
echo "PASS: $ranks instances fell back to MPI_Barrier with a full /dev/shm"
