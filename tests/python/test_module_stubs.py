"""The package's types cannot drift from its code: the extension module ``_core``'s stub names
exactly what the module defines, and every call of ``_api.__all__`` (which ``__init__.pyi``
star-imports) is typed where it is written: a function annotated in full, or an alias of a
``_core`` function its stub types. ``_mpi`` has no stub: Python reaches it only through
``_core.backend()`` (typed ``Any``), so a binding added there is typed by its ``_api`` call."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import popdist

PACKAGE = Path(popdist.__file__).resolve().parent
# The public names a module defines, printed by a fresh interpreter (as the package is imported
# by a user: nothing of this process's state).
LIST_NAMES = "import importlib, json; m = importlib.import_module({!r}); " \
             "print(json.dumps(sorted(n for n in vars(m) if not n.startswith('_'))))"


def parsed(name):
    return ast.parse((PACKAGE / name).read_text(), name).body


def stub_names(name):
    """The public names the stub file ``name`` defines: functions, classes and annotated values."""
    names = set()
    for node in parsed(name):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def unannotated(function):
    """The parameters of ``function`` (an ast.FunctionDef) without a type, and "return" if it has none."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    parameters += [p for p in (arguments.vararg, arguments.kwarg) if p is not None]
    missing = [p.arg for p in parameters if p.annotation is None]
    return missing + (["return"] if function.returns is None else [])


def test_the_core_modules_stub_names_what_it_defines():
    printed = subprocess.run([sys.executable, "-c", LIST_NAMES.format("popdist._core")], capture_output=True,
                             text=True, check=True, timeout=120).stdout
    assert stub_names("_core.pyi") == set(json.loads(printed))


def test_every_call_is_typed_where_it_is_written():
    functions = {node.name: node for node in parsed("_api.py") if isinstance(node, ast.FunctionDef)}
    aliases = {node.targets[0].id: node.value for node in parsed("_api.py")
               if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    for name in popdist._api.__all__:
        if name in functions:
            assert unannotated(functions[name]) == [], f"_api.{name} needs its types"
        else:  # `name = _core.x`: typed by _core.pyi
            value = aliases[name]
            assert isinstance(value, ast.Attribute) and ast.unparse(value.value) == "_core", name
            assert value.attr in stub_names("_core.pyi"), f"_core.{value.attr} has no stub"


def test_api_names_its_calls_in_a_list_type_checkers_can_read():
    assignments = [node for node in parsed("_api.py") if any(
        isinstance(target, ast.Name) and target.id == "__all__"
        for target in getattr(node, "targets", [getattr(node, "target", None)]))]
    assert len(assignments) == 1 and isinstance(assignments[0].value, ast.List)
    assert [ast.literal_eval(element) for element in assignments[0].value.elts] == popdist._api.__all__
