"""PopDist's topology getters come from the core's field table (popdist/topology_fields.hpp): one
real function per row that names a getter, with the row's docstring, in the package, in
popdist.popdist_core and typed in the stubs, so that the table, the package and the stubs cannot
drift apart."""

import ast
import types
from pathlib import Path

import pytest

import popdist
from popdist import _core
from helpers import use_topology

PACKAGE = Path(popdist.__file__).resolve().parent
RETURNS = {"integer": "int", "flag": "bool"}  # what PopDist's getter of each kind returns
GETTER_ROWS = [(field, kind, getter, doc) for field, kind, getter, doc in _core.TOPOLOGY_FIELD_ROWS if getter]


def stub_functions(name):
    """The top-level functions of the stub file ``name``: {function: (parameters, return annotation)}."""
    tree = ast.parse((PACKAGE / name).read_text(), name)
    return {node.name: ([a.arg for a in node.args.args], ast.unparse(node.returns) if node.returns else None)
            for node in tree.body if isinstance(node, ast.FunctionDef)}


def stub_reexports(name):
    """The names the stub file ``name`` re-exports from the package (``from . import x as x``)."""
    tree = ast.parse((PACKAGE / name).read_text(), name)
    return {alias.name for node in tree.body if isinstance(node, ast.ImportFrom) and node.module is None
            for alias in node.names}


def stub_star_imports(name):
    """The package's modules the stub file ``name`` star-imports (``from ._api import *``)."""
    tree = ast.parse((PACKAGE / name).read_text(), name)
    return {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 1
            and [alias.name for alias in node.names] == ["*"]}


def test_the_table_names_popdists_nine_getters():
    assert [row[0] for row in _core.TOPOLOGY_FIELD_ROWS] == list(_core.TOPOLOGY_FIELDS)
    assert sorted(getter for _, _, getter, _ in GETTER_ROWS) == sorted([
        "getInstanceIndex", "getNumInstances", "getLocalInstanceIndex", "getNumLocalReplicas",
        "getNumTotalReplicas", "getReplicaIndexOffset", "getNumIpusPerReplica", "isUniformReplicasPerInstance",
        "isPopdistEnvSet"])


@pytest.mark.parametrize(("field", "kind", "getter", "doc"), GETTER_ROWS, ids=[row[2] for row in GETTER_ROWS])
def test_each_getter_is_a_documented_function_of_the_package(field, kind, getter, doc):
    function = getattr(popdist, getter)
    assert isinstance(function, types.FunctionType)
    assert function.__name__ == getter and function.__doc__ == doc and doc
    assert getter in popdist.__all__
    assert getattr(popdist.popdist_core, getter) is function and getter in popdist.popdist_core.__all__
    assert kind in RETURNS, f"{getter}: PopDist's getters return counts and flags, not {kind}"


@pytest.mark.parametrize(("field", "kind", "getter", "doc"), GETTER_ROWS, ids=[row[2] for row in GETTER_ROWS])
def test_each_getter_is_typed_in_the_stubs(field, kind, getter, doc):
    assert stub_functions("__init__.pyi").get(getter) == ([], RETURNS[kind])
    assert getter in stub_reexports("popdist_core.pyi")


def test_the_stubs_declare_exactly_the_getters_and_take_the_calls_from_api():
    # The getters are typed one by one (they are made at import); the calls come from _api.py,
    # typed where they are written (test_module_stubs.py checks that each is).
    assert set(stub_functions("__init__.pyi")) == {getter for _, _, getter, _ in GETTER_ROWS}
    assert stub_star_imports("__init__.pyi") == {"_api"}
    assert stub_reexports("popdist_core.pyi") == set(popdist.popdist_core.__all__)


def test_each_getter_reads_its_field_of_the_current_topology(request):
    # Values that differ from field to field, so that a getter reading another field shows.
    topology = popdist.detect({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
                               "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
                               "POPDIST_NUM_LOCAL_REPLICAS": "2", "POPDIST_NUM_IPUS_PER_REPLICA": "4"})
    use_topology(request, topology)
    got = {getter: getattr(popdist, getter)() for _, _, getter, _ in GETTER_ROWS}
    assert got == {"getInstanceIndex": 3, "getNumInstances": 4, "getLocalInstanceIndex": 1, "getNumLocalReplicas": 2,
                   "getNumTotalReplicas": 8, "getReplicaIndexOffset": 6, "getNumIpusPerReplica": 4,
                   "isUniformReplicasPerInstance": True, "isPopdistEnvSet": True}
    assert not popdist.isBackendInitialized()  # no MPI for a getter
