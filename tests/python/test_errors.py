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


@pytest.mark.parametrize("call", ["synchronize()", "synchronize('by-id')", "synchronize(timeout=5)",
                                  "registerCommunicator({0})", "execute_on_instances({0}, print)",
                                  # once _mpi is loaded, execute_on_instances goes to the binding directly
                                  "_api._backend() and popdist.execute_on_instances([0], print)", "comm()"])
def test_mpi_calls_before_init_are_usage_errors(monkeypatch, call):
    # The _mpi module's translator: a collective before init() is a clear error, not a hang.
    for name in launcher_variables():
        monkeypatch.delenv(name)
    got = run_json(RAISES_SCRIPT.format(call=call))
    assert got["type"] == "UsageError" and got["popdist_error"] is True, got
    assert "init" in got["message"]


def test_comm_without_mpi4py_is_an_import_error_naming_it(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "mpi4py", None)
    with pytest.raises(ImportError, match="popdist.comm\\(\\) needs mpi4py") as error:
        popdist.comm()
    assert error.value.name == "mpi4py"
