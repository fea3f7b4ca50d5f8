"""popdist.synchronize is one binding (popdist._core.synchronize): before init() a job of one
instance needs no MPI; after init() every call, with or without arguments, goes to the binding of
popdist::synchronize in popdist._mpi, which binds the arguments as Python would."""

import inspect
import pickle

import popdist
from helpers import launcher_variables, run_json


def test_popdist_synchronize_is_the_documented_binding():
    function = popdist.synchronize
    assert function is popdist._core.synchronize
    assert function.__name__ == "synchronize"
    assert "A barrier." in function.__doc__
    assert list(inspect.signature(function).parameters) == ["communicator_id", "participants", "timeout"]
    assert pickle.loads(pickle.dumps(function)) is function


SCRIPT = """
import json, sys, popdist

def outcome(call):
    try:
        call()
        return None
    except Exception as error:
        return [type(error).__name__, str(error)]

calls = [
    lambda: popdist.synchronize(),
    lambda: popdist.synchronize("", (), None),
    lambda: popdist.synchronize(participants=[0], timeout=30),
    lambda: popdist.synchronize(1, 2, 3, 4),
    lambda: popdist.synchronize(color=1),
    lambda: popdist.synchronize("", timeout=None, communicator_id=""),
    lambda: popdist.synchronize(communicator_id=3),
]
before = [outcome(call) for call in calls]  # one instance, no init(): no MPI
mpi_loaded = "popdist._mpi" in sys.modules
popdist.init()
after_init = [outcome(call) for call in calls]
popdist.finalize()
print(json.dumps({"before": before, "mpi_loaded": mpi_loaded, "after_init": after_init,
                  "after_finalize": outcome(popdist.synchronize)}))
"""


def test_the_same_calls_before_and_after_init(monkeypatch):
    for name in launcher_variables():
        monkeypatch.delenv(name)
    got = run_json(SCRIPT, timeout=120)
    expected = [
        None,
        None,
        None,
        ["TypeError", "synchronize() takes from 0 to 3 positional arguments but 4 were given"],
        ["TypeError", "synchronize() got an unexpected keyword argument 'color'"],
        ["TypeError", "synchronize() got multiple values for argument 'communicator_id'"],
        ["UsageError", "communicator_id must be a str, got 3"],
    ]
    assert got == {"before": expected, "mpi_loaded": False, "after_init": expected, "after_finalize": None}
