"""A plain single process (no launcher) is a job of one instance: with or without init(),
registerCommunicator, synchronize, execute_on_instances and the getters act as in that job, and
without init() they need no MPI (the PopDist pattern `if isPopdistEnvSet(): init()` followed by
unconditional calls). Each case runs in a fresh interpreter with no launcher variables."""

import pytest

from helpers import launcher_variables, run_json

CALLS_WITHOUT_INIT = """
import json, math, sys, popdist
ran = []
def prepare(x, scale=1):
    popdist.synchronize()  # a bare synchronize inside: scoped to {0}, nothing to wait for
    ran.append(x)
    return x * scale
popdist.registerCommunicator({0})
popdist.registerCommunicator([0], "mine")
results = {
    "synchronize": popdist.synchronize(),
    "by_id": popdist.synchronize("mine"),
    "by_participants": popdist.synchronize(participants=range(1)),
    "new_id_with_participants": popdist.synchronize("other", participants=[0]),
    "then_by_that_id": popdist.synchronize("other"),
    "timed": popdist.synchronize(participants={0}, timeout=5),
    "unlimited": popdist.synchronize(timeout=math.inf),
    "execute": popdist.execute_on_instances({0}, prepare, 21, scale=2),
    "nested": popdist.execute_on_instances([0], lambda: popdist.execute_on_instances({0}, lambda: "inner")),
}
try:
    popdist.execute_on_instances({0}, lambda: 1 / 0)
except ZeroDivisionError as error:
    results["raised"] = type(error).__name__
results["ran"] = ran
results["mpi_loaded"] = "popdist._mpi" in sys.modules
results["backend"] = popdist.isBackendInitialized()
results["instances"] = popdist.getNumInstances()
print(json.dumps(results))
"""

CALLS_AFTER_INIT = """
import json, math, popdist
popdist.init()
popdist.registerCommunicator({0}, "mine")
results = {
    "backend": popdist.isBackendInitialized(),
    "synchronize": popdist.synchronize(),
    "by_id": popdist.synchronize("mine"),
    "timed": popdist.synchronize(participants={0}, timeout=5),
    "unlimited": popdist.synchronize(participants={0}, timeout=math.inf),
    "execute": popdist.execute_on_instances({0}, lambda a, b=0: a + b, 40, b=2),
}
try:
    popdist.registerCommunicator([1])
except popdist.UsageError as error:
    results["error"] = str(error)
popdist.finalize()
results["after_finalize"] = [popdist.isBackendInitialized(), popdist.synchronize(),
                             popdist.execute_on_instances({0}, lambda: "again")]
print(json.dumps(results))
"""


@pytest.fixture
def unlaunched(monkeypatch):
    for name in launcher_variables():
        monkeypatch.delenv(name)


def test_calls_act_as_in_a_job_of_one_instance_without_init_and_without_mpi(unlaunched):
    got = run_json(CALLS_WITHOUT_INIT)
    assert got["execute"] == 42 and got["ran"] == [21] and got["nested"] == "inner", got
    assert got["raised"] == "ZeroDivisionError", got
    for name in ("synchronize", "by_id", "by_participants", "new_id_with_participants", "then_by_that_id", "timed",
                 "unlimited"):
        assert got[name] is None, (name, got)
    assert got["mpi_loaded"] is False and got["backend"] is False and got["instances"] == 1, got


def test_the_same_calls_after_init_go_through_mpi(unlaunched):
    got = run_json(CALLS_AFTER_INIT, timeout=120)
    assert got["backend"] is True and got["execute"] == 42, got
    assert got["synchronize"] is None and got["by_id"] is None and got["timed"] is None and got["unlimited"] is None
    assert got["error"].startswith("registerCommunicator: participant 1 out of range: valid instance indices are 0..0")
    # After finalize() the process is again a job of one instance without a backend.
    assert got["after_finalize"] == [False, None, "again"], got
