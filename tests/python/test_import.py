"""`import popdist` is cheap, never starts MPI, and exposes PopDist's whole API by its names."""

import inspect
import json

import pytest

import popdist
from helpers import launcher_variables, run_json

POPDIST_API = {
    # name: the parameters (name, default) of Graphcore's PopDist function
    "checkNumIpusPerReplica": [("numIpusPerReplica", inspect.Parameter.empty)],
    "execute_on_instances": [("instances", inspect.Parameter.empty), ("func", inspect.Parameter.empty), ("args", None), ("kwargs", None)],
    "getDeviceId": [("ipusPerReplica", 0)],
    "getInstanceIndex": [],
    "getLocalInstanceIndex": [],
    "getNumInstances": [],
    "getNumIpusPerReplica": [],
    "getNumLocalReplicas": [],
    "getNumTotalReplicas": [],
    "getReplicaIndexOffset": [],
    "init": [],
    "isBackendInitialized": [],
    "isPopdistEnvSet": [],
    "isUniformReplicasPerInstance": [],
    "registerCommunicator": [("participants", inspect.Parameter.empty), ("communicator_id", "")],
    # participants=(): the binding's text signature holds only literals; any empty iterable means
    # "no participants".
    "synchronize": [("communicator_id", ""), ("participants", ()), ("timeout", None)],
}


@pytest.fixture
def clean_env(monkeypatch):
    for name in launcher_variables():
        monkeypatch.delenv(name)


@pytest.mark.parametrize("name", sorted(POPDIST_API))
def test_every_popdist_function_has_its_popdist_signature(name):
    function = getattr(popdist, name)
    assert name in popdist.__all__
    parameters = list(inspect.signature(function).parameters.values())
    expected = POPDIST_API[name]
    assert [p.name for p in parameters] == [n for n, _ in expected]
    for parameter, (_, default) in zip(parameters, expected):
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        assert parameter.default == default, f"{name}({parameter.name}=...)"


def test_execute_on_instances_takes_star_args_and_kwargs():
    kinds = [p.kind for p in inspect.signature(popdist.execute_on_instances).parameters.values()]
    assert kinds[2:] == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]


def test_extras_exist():
    for name in ("topology", "finalize", "comm", "ReplicaGrouping", "detect", "getLocalDeviceOrdinals"):
        assert callable(getattr(popdist, name)), name


def test_import_and_getters_do_not_load_mpi(clean_env, monkeypatch):
    # Pretend to be rank 1 of 2 under Open MPI: the getters answer, yet neither popdist._mpi nor
    # mpi4py nor libmpi gets loaded.
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    result = run_json(
        "import json, sys, popdist\n"
        "answers = [popdist.getInstanceIndex(), popdist.getNumInstances(), popdist.isPopdistEnvSet(),\n"
        "           popdist.isBackendInitialized(), popdist.getDeviceId()]\n"
        "maps = open('/proc/self/maps').read()\n"
        "print(json.dumps({'answers': answers, 'mpi_module': 'popdist._mpi' in sys.modules,\n"
        "                  'mpi4py': 'mpi4py' in sys.modules, 'libmpi': 'libmpi' in maps}))"
    )
    # Device id: 2 single-device groups, this instance's is the second (offset 1).
    assert result == {"answers": [1, 2, True, False, 1], "mpi_module": False, "mpi4py": False, "libmpi": False}


def test_backend_is_not_initialized_after_import():
    assert popdist.isBackendInitialized() is False


def test_version_is_the_core_version():
    assert popdist.__version__ == popdist._core.__version__
    assert popdist.__version__.count(".") == 2


def test_stubs_ship_with_the_package():
    from pathlib import Path

    package = Path(popdist.__file__).parent
    import ast

    for name in ("__init__.pyi", "_core.pyi", "py.typed"):
        assert (package / name).is_file(), name
    stubbed = {node.name for node in ast.parse((package / "__init__.pyi").read_text()).body
               if isinstance(node, ast.FunctionDef)}
    stubbed |= set(popdist._api.__all__)  # the stub star-imports _api, where the calls are typed
    functions = {name for name in popdist.__all__ if callable(getattr(popdist, name)) and not isinstance(
        getattr(popdist, name), type)}
    assert functions <= stubbed, functions - stubbed


def test_star_import_does_not_shadow_builtins():
    namespace = {}
    exec("from popdist import *", namespace)  # noqa: S102 - the point of the test
    assert "TimeoutError" not in namespace and "EnvironmentError" not in namespace
    assert json.loads(json.dumps(sorted(popdist.__all__))) == sorted(set(popdist.__all__))
