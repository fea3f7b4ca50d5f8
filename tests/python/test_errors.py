"""The exception hierarchy, and the C++ -> Python translation of both extension modules."""

import builtins
import pickle

import pytest

import popdist
from helpers import RAISES_SCRIPT, launcher_variables, run_json


def test_hierarchy():
    for cls in (popdist.PopDistEnvironmentError, popdist.TopologyError, popdist.UsageError, popdist.MPIError,
                popdist.TimeoutError, popdist.RemoteExecutionError):
        assert issubclass(cls, popdist.PopDistError), cls
    assert issubclass(popdist.PopDistError, Exception)
    assert issubclass(popdist.UsageError, ValueError)
    assert issubclass(popdist.TimeoutError, builtins.TimeoutError)
    assert popdist.TimeoutError is not builtins.TimeoutError
    assert not issubclass(popdist.PopDistEnvironmentError, OSError)


def test_structured_attributes():
    e = popdist.MPIError("MPI_Barrier failed", function="MPI_Barrier", code=5, mpi_message="MPI_ERR_COMM")
    assert (e.function, e.code, e.mpi_message, str(e)) == ("MPI_Barrier", 5, "MPI_ERR_COMM", "MPI_Barrier failed")
    t = popdist.TimeoutError("instances 2, 3 did not arrive", missing_instances=(2, 3))
    assert t.missing_instances == [2, 3] and str(t) == "instances 2, 3 did not arrive"
    r = popdist.RemoteExecutionError("failed on 1", instance=1, exception_type="KeyError", exception_message="'k'")
    assert (r.instance, r.exception_type, r.exception_message) == (1, "KeyError", "'k'")


def test_errors_pickle_with_their_message():
    # (e.g. to cross a multiprocessing boundary) - the message survives.
    e = pickle.loads(pickle.dumps(popdist.UsageError("bad participants [7]")))
    assert type(e) is popdist.UsageError and str(e) == "bad participants [7]"


def test_core_translates_usage_error():
    with pytest.raises(popdist.UsageError) as error:
        popdist.ReplicaGrouping(6, 4)
    assert type(error.value).__module__ == "popdist.errors"


def test_core_translates_environment_error():
    with pytest.raises(popdist.PopDistEnvironmentError, match="OMPI_COMM_WORLD_SIZE"):
        popdist.detect({"OMPI_COMM_WORLD_RANK": "0"})


TWO_INSTANCES = {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}


@pytest.mark.parametrize(("call", "named"), [
    ("synchronize()", "synchronize"), ("synchronize('by-id')", "synchronize"),
    ("synchronize(timeout=5)", "synchronize"), ("synchronize(participants={0, 1})", "synchronize"),
    ("registerCommunicator({0})", "registerCommunicator"), ("execute_on_instances({0}, print)", "execute_on_instances"),
    # once _mpi is loaded, execute_on_instances goes to the binding directly
    ("_api._backend() and popdist.execute_on_instances([0], print)", "execute_on_instances"),
    # (not comm(): importing mpi4py would initialize MPI under the fake launcher variables)
    ("registerGroupingCommunicators(popdist.ReplicaGrouping(2))", "registerGroupingCommunicators"),
])
def test_several_instances_without_init_are_usage_errors_naming_the_python_call(monkeypatch, call, named):
    # The _mpi module's translator: a collective before init() is a clear error, not a hang, and
    # it names the Python function that was called (registerCommunicator, not register_communicator).
    for name in launcher_variables():
        monkeypatch.delenv(name)
    for name, value in TWO_INSTANCES.items():
        monkeypatch.setenv(name, value)
    got = run_json(RAISES_SCRIPT.format(call=call))
    assert got["type"] == "UsageError" and got["popdist_error"] is True, got
    assert got["message"].startswith(f"{named}: popdist is not initialized: call popdist.init()"), got


@pytest.mark.parametrize(("call", "message"), [
    ("registerCommunicator([0, 2])",
     "registerCommunicator: participant 2 out of range: valid instance indices are 0..1 (2 instances)"),
    ("synchronize(participants=[1, 1])",
     "synchronize(participants=...): duplicate participant 1 in [1, 1]: each instance may appear once"),
    ("synchronize(timeout=0)", "synchronize: timeout=0 seconds is ambiguous"),
    ("execute_on_instances(range(3), print)", "execute_on_instances: participant 2 out of range"),
])
def test_the_mpi_bindings_check_arguments_by_the_core_rule_under_python_names(monkeypatch, call, message):
    # Arguments are checked before init() is: the same rule and wording as the single-process path.
    for name in launcher_variables():
        monkeypatch.delenv(name)
    for name, value in TWO_INSTANCES.items():
        monkeypatch.setenv(name, value)
    got = run_json(RAISES_SCRIPT.format(call=call))
    assert got["type"] == "UsageError", got
    assert got["message"].startswith(message), got


def test_comm_without_mpi4py_is_an_import_error_naming_it(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "mpi4py", None)
    with pytest.raises(ImportError, match="popdist.comm\\(\\) needs mpi4py") as error:
        popdist.comm()
    assert error.value.name == "mpi4py"
