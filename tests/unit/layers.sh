#!/bin/sh
# The layers' promises that a grep can check (docs/guide/development.md, "Layout"):
#   protocols_below_registry  no file of src/protocols/ (any of its families' subfolders) includes
#                             the registry or a layer above it;
#   mpi_calls_in_src          the bindings and the CLI call no MPI function themselves: the library
#                             (src/) makes every MPI call, with src/mpi's lock and checks.
# A check passes only when grep ran and found nothing (status 1): a match (0) fails it, and so does
# a folder that is not there (2), so that a moved folder cannot make the check pass unseen.
# usage: layers.sh SOURCE_ROOT CHECK
set -u
root=$1
none_found() {  # PATTERN FOLDER...
  pattern=$1
  shift
  grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' "$pattern" "$@"
  status=$?
  [ "$status" -eq 1 ] && return 0
  [ "$status" -eq 0 ] && echo "layers.sh $check: the lines above break the layers" >&2
  return 1
}
check=$2
case $check in
  protocols_below_registry) none_found '#include "(registry|process|collectives)/' "$root/src/protocols" ;;
  # A call of an MPI (or PMPI) function outside a // comment; types and constants are not calls.
  mpi_calls_in_src) none_found '^([^/]|/[^/])*\bP?MPI_[A-Z][a-z0-9_]*\(' "$root/bindings/src" "$root/tools" ;;
  *) echo "layers.sh: unknown check '$check' (expected protocols_below_registry or mpi_calls_in_src)" >&2; exit 2 ;;
esac
