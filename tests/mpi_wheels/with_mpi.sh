#!/usr/bin/env bash
# Runs a command with one PyPI MPI first (the mpi.env that build_against.sh wrote into <work>), or
# skips (exit 77) naming why that build is not there: the setup test skipped or failed.
# Usage: with_mpi.sh <work-dir> <command...>
set -euo pipefail
work=${1:?usage: with_mpi.sh <work-dir> <command...>}
shift
if [ ! -e "$work/ready" ]; then
  if [ -s "$work/skipped" ]; then echo "SKIP: $(cat "$work/skipped")"; else
    echo "SKIP: no build against this MPI in $work: its mpi_wheels.<mpi>.build test did not pass"; fi
  exit 77
fi
# shellcheck disable=SC1091
source "$work/mpi.env"
exec "$@"
