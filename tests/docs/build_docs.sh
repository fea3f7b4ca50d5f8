#!/usr/bin/env bash
# Builds the user guide (docs/) with Sphinx, every warning an error (-W), into <output dir>. The API
# reference is generated from the docstrings of the popdist that $PYTHON imports (`pip install .`),
# so a guide page or a docstring that no longer renders fails here. Exit 77 (skip) names what is
# missing: Sphinx and MyST (.ci/install-deps installs both) or an installed popdist.
# Usage: PYTHON=python3 bash tests/docs/build_docs.sh <output dir>
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
output=${1:?usage: build_docs.sh <output dir>}
if ! "$python" -c "import sphinx, myst_parser" 2>/dev/null; then
  echo "SKIP: $python has no sphinx or myst_parser (pip install sphinx myst-parser)"
  exit 77
fi
if ! (cd / && "$python" -c "import popdist._core") 2>/dev/null; then
  echo "SKIP: $python cannot import popdist (pip install . first): the API reference is its docstrings"
  exit 77
fi
rm -rf "$output"
exec "$python" -m sphinx -W --keep-going -q -b html "$PWD/docs" "$output"
