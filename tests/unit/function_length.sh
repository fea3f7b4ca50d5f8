#!/bin/sh
# No function in src/, bindings/ or tools/ longer than 80 lines (docs/guide/development.md,
# "Conventions"), measured by lizard, which reads C++ and Python alike. Exit 77 (a skip that
# names it) when lizard is not installed; .ci/install-deps installs it.
root="$1"
python3 -c "import lizard" 2>/dev/null || { echo "SKIP: lizard is not installed (pip install lizard)"; exit 77; }
# Only the length limit is checked: -C/-a/-T raise lizard's other default limits out of the way.
python3 -m lizard --length 80 -C 1000 -a 100 -T nloc=1000 --warnings_only \
  "$root/src" "$root/bindings" "$root/tools" && echo "every function is at most 80 lines"
