"""popdist._core.FastPathFunction, which makes popdist.synchronize() without arguments skip its
Python frame (its cost is measurable against mpi4py's Barrier()): the dispatch, and that the result still looks like the function it wraps."""

import inspect
import pickle

import pytest

import popdist
from helpers import launcher_variables, run_json
from popdist._core import FastPathFunction


def recorder():
    calls = []

    def fast():
        calls.append("fast")
        return "from fast"

    def general(*args, **kwargs):
        calls.append(("general", args, kwargs))
        return "from general"

    return calls, fast, general


def test_no_arguments_call_fast_and_any_argument_calls_general():
    calls, fast, general = recorder()
    function = FastPathFunction(fast, general)
    assert function() == "from fast"
    assert function(1) == "from general"
    assert function(key=2) == "from general"
    assert function(1, 2, key=3) == "from general"
    assert function(*[], **{}) == "from fast"  # an empty unpacking is no argument
    assert calls == ["fast", ("general", (1,), {}), ("general", (), {"key": 2}),
                     ("general", (1, 2), {"key": 3}), "fast"]


def test_exceptions_propagate_unchanged():
    def failing():
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        FastPathFunction(failing, print)()
    with pytest.raises(KeyError, match="boom"):
        FastPathFunction(print, lambda *a: failing())(1)


def test_fast_can_be_rebound_only_to_a_callable():
    calls, fast, general = recorder()
    function = FastPathFunction(fast, general)
    function.fast = lambda: "rebound"
    assert function() == "rebound"
    with pytest.raises(TypeError, match="must be callable"):
        function.fast = None
    with pytest.raises(TypeError, match="must be callable"):
        FastPathFunction(None, general)
    with pytest.raises(AttributeError):
        function.general = fast


def test_popdist_synchronize_looks_like_the_function_it_wraps():
    function = popdist.synchronize
    assert isinstance(function, FastPathFunction)
    assert function.__name__ == "synchronize" and function.__module__ == "popdist._api"
    assert "A barrier." in function.__doc__
    assert inspect.isfunction(function.__wrapped__) and function.general is function.__wrapped__
    assert list(inspect.signature(function).parameters) == ["communicator_id", "participants", "timeout"]
    assert pickle.loads(pickle.dumps(function)) is function
    assert "synchronize" in repr(function)


BINDING_SCRIPT = """
import json, sys, popdist
stub = popdist.synchronize.fast
popdist.synchronize()  # one instance, no init(): the Python stub answers, without MPI
before = {"mpi_loaded": "popdist._mpi" in sys.modules, "still_stub": popdist.synchronize.fast is stub}
popdist.init()
bound = popdist.synchronize.fast is sys.modules["popdist._mpi"].synchronize_scope
popdist.synchronize()
popdist.finalize()
print(json.dumps({**before, "bound_after_init": bound, "stub_after_finalize": popdist.synchronize.fast is stub}))
"""


def test_synchronize_binds_the_mpi_binding_at_init(monkeypatch):
    # A fresh process: before init(), fast is the Python stub (a job of one instance needs no
    # MPI); init() points it at the binding itself; finalize() puts the stub back.
    for name in launcher_variables():
        monkeypatch.delenv(name)
    got = run_json(BINDING_SCRIPT, timeout=120)
    assert got == {"mpi_loaded": False, "still_stub": True, "bound_after_init": True, "stub_after_finalize": True}
