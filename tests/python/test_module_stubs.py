"""The extension modules' stubs (_core.pyi, _mpi.pyi) name exactly what the modules define, so a
binding added or removed in C++ without its stub line fails here instead of drifting."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import popdist

PACKAGE = Path(popdist.__file__).resolve().parent
# The public names a module defines, printed by a fresh interpreter: importing popdist._mpi loads
# libmpi, which this process must not (test_arguments.py checks that argument errors do not).
LIST_NAMES = "import importlib, json; m = importlib.import_module({!r}); " \
             "print(json.dumps(sorted(n for n in vars(m) if not n.startswith('_'))))"


def stub_names(name):
    """The public names the stub file ``name`` defines: functions, classes and annotated values."""
    names = set()
    for node in ast.parse((PACKAGE / name).read_text(), name).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


@pytest.mark.parametrize("module", ["popdist._core", "popdist._mpi"])
def test_a_modules_stub_names_what_it_defines(module):
    printed = subprocess.run([sys.executable, "-c", LIST_NAMES.format(module)], capture_output=True, text=True,
                             check=True, timeout=120).stdout
    assert stub_names(module.split(".")[1] + ".pyi") == set(json.loads(printed))
