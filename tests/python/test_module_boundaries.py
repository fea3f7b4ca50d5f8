"""No module of the package reaches into another module's private names. The rule, read from
the leading underscore: on a module of the package (``_api.py``, ``_core``) it means
"package-private", a helper module its siblings import (``from . import _api``,
``import popdist._mpi``) and users do not; on a name inside a module (``_shown``, ``_state``) it
means "this module's own". So a module may use a sibling's public names (``_api.init()``,
``popdist.torch.NO_LIMIT``), never ``B._name`` nor ``from .B import _name`` for another module B,
helper or public (dunders such as ``__all__`` excepted). A name two modules share belongs in a
helper module, without an underscore there (``_agreement.as_timedelta``). Only the package itself
is reached for a leading-underscore name, and only for a module (``popdist._core``). Tests and
``popdist run``'s start-up hook are not the package and are not checked.
"""

import ast
from pathlib import Path

import popdist

PACKAGE = Path(popdist.__file__).resolve().parent


def module_names(package):
    """The package's modules: its Python files, stubs and extension modules (``_mpi.cpython-...so``)."""
    files = [*package.glob("*.py"), *package.glob("*.pyi"), *package.glob("*.so")]
    return {path.name.split(".")[0] for path in files}


def is_private(name):
    return name.startswith("_") and not name.startswith("__")


class _Reaches(ast.NodeVisitor):
    """The leading-underscore names one module takes from its siblings, as "line: B._name"."""

    def __init__(self, own, package, modules):
        self.own, self.package, self.modules = own, package, modules
        self.bound = {}  # local name -> the module it is bound to ("popdist", "popdist.torch", ...)
        self.found = []

    def in_package(self, module):
        return module == self.package or module.startswith(self.package + ".")

    def module_of(self, node):
        """The module ``node`` (a name or a dotted chain) stands for, or None."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute) and self.module_of(node.value) == self.package:
            return f"{self.package}.{node.attr}" if node.attr in self.modules else None
        return None

    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname:
                self.bound[alias.asname] = alias.name
            else:
                self.bound.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])

    def visit_ImportFrom(self, node):
        if node.level > 1 or (node.level == 0 and not self.in_package(node.module or "")):
            return
        source = self.package if node.level == 1 and node.module is None else (
            f"{self.package}.{node.module}" if node.level == 1 else node.module)
        for alias in node.names:
            if source == self.package and alias.name in self.modules:
                self.bound[alias.asname or alias.name] = f"{self.package}.{alias.name}"
            elif is_private(alias.name):
                self.found.append(f"{node.lineno}: from {source} import {alias.name}")

    def visit_Attribute(self, node):
        owner = self.module_of(node.value)
        if owner is not None and owner != self.own and self.in_package(owner) and is_private(node.attr):
            if not (owner == self.package and node.attr in self.modules):
                self.found.append(f"{node.lineno}: {owner}.{node.attr}")


def reaches(path, package_name, modules):
    """Where the module at ``path`` uses another module's private names."""
    tree = ast.parse(path.read_text(), str(path))
    visitor = _Reaches(f"{package_name}.{path.stem}", package_name, modules)
    # Imports first: a name may be used above the import that binds it (in a function).
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            visitor.visit(node)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            visitor.visit_Attribute(node)
    return sorted(set(visitor.found), key=lambda line: (int(line.split(":")[0]), line))


def boundary_violations(package, package_name="popdist"):
    modules = module_names(package)
    found = {path.name: reaches(path, package_name, modules) for path in sorted(package.glob("*.py"))}
    return {name: lines for name, lines in found.items() if lines}


def test_no_module_reaches_into_another_modules_private_names():
    assert boundary_violations(PACKAGE) == {}


def test_the_check_finds_each_kind_of_reach(tmp_path):
    # The check itself can fail: each forbidden form is found, each allowed one passed.
    (tmp_path / "_helper.py").write_text("def shared(): pass\ndef _own(): pass\n")
    (tmp_path / "torch.py").write_text("_state = None\ndef public(): pass\n")
    (tmp_path / "lightning.py").write_text(
        "import os, pkg._mpi\n"
        "from . import _helper, torch as _t\n"
        "from ._helper import _own, shared\n"
        "import pkg.torch as pt\n"
        "def f():\n"
        "    _helper.shared(); _t.public(); pt.__name__; pkg._mpi.x(); _helper.__all__; os._exit\n"
        "    return _helper._own(), _t._state, pt._state, pkg._secret, pkg.torch._state\n")
    (tmp_path / "_mpi.cpython-312-x86_64-linux-gnu.so").write_bytes(b"")
    assert boundary_violations(tmp_path, "pkg") == {"lightning.py": [
        "3: from pkg._helper import _own", "7: pkg._helper._own", "7: pkg._secret", "7: pkg.torch._state"]}
