#!/bin/sh
# The layers' promises that a grep can check (docs/guide/development.md, "Layout"):
#   protocols_below_registry  no file of src/protocols/ (any of its families' subfolders) includes
#                             the registry or a layer above it.
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
  *) echo "layers.sh: unknown check '$check' (expected protocols_below_registry)" >&2; exit 2 ;;
esac
