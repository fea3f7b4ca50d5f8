#!/bin/sh
# A short, reproducible libFuzzer run for CTest: run_fuzzer.sh <harness> <workdir> <runs> <corpus dirs...>
# -seed and -runs fix the work (the same inputs on every machine, however loaded), so a CI run
# either always or never finds something. New inputs go to <workdir>/corpus, never into the
# source tree; a crash leaves <workdir>/crash-* (or oom-/timeout-/leak-*), to be kept as
# tests/fuzz/corpus/<harness>/finding-<what> once understood, so that every build replays it.
set -e
harness=$1; workdir=$2; runs=$3; shift 3
rm -rf "$workdir"; mkdir -p "$workdir/corpus"
# -rss_limit_mb/-malloc_limit_mb: an input that makes popdist allocate gigabytes is a finding
# (sizes must be checked before allocating), not a reason to exhaust the CI machine.
if "$harness" -seed=1 -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=512 \
     -print_final_stats=1 -artifact_prefix="$workdir/" "$workdir/corpus" "$@"; then
  exit 0
fi
echo "FINDING: $(ls "$workdir" | grep -v '^corpus$' | sed "s|^|$workdir/|" | tr '\n' ' ')" >&2
echo "reproduce: $harness <that file>; keep it as tests/fuzz/corpus/$(basename "$harness" | sed 's/^fuzz_//')/finding-<what>" >&2
exit 1
