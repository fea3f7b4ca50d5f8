"""The process's life under Python has one owner, popdist._lifecycle: its one atexit callback runs
the teardowns registered with _lifecycle.at_exit (popdist.torch's) newest first, while popdist is
still initialized, then finalizes what mpi4py started. The current topology lives in popdist._core
(the Python package keeps none). Each case runs in a fresh interpreter with no launcher variables."""

import pytest

from helpers import launcher_variables, run_python


@pytest.fixture(autouse=True)
def plain_process(monkeypatch):
    for name in launcher_variables():
        monkeypatch.delenv(name)


TEARDOWNS = """
import popdist
from popdist import _lifecycle
{start}
def teardown(name):
    def run():
        print(name, popdist.isBackendInitialized(), flush=True)
    return run
_lifecycle.at_exit(teardown("first"))
_lifecycle.at_exit(teardown("second"))
print("exiting", popdist.isBackendInitialized(), flush=True)
"""


@pytest.mark.parametrize(("start", "initialized"), [
    ("", False),                                  # never initialized: the teardowns still run
    ("popdist.init()", True),                     # popdist started MPI: its C++ exit handler finalizes later
    ("from mpi4py import MPI\npopdist.init()", True),  # mpi4py started MPI: finalized after the teardowns
])
def test_teardowns_run_at_exit_newest_first_before_finalize(start, initialized):
    result = run_python(TEARDOWNS.format(start=start))
    assert result.returncode == 0, result.stderr
    state = str(initialized)
    assert result.stdout.split("\n")[:3] == [f"exiting {state}", f"second {state}", f"first {state}"], result.stdout


def test_a_failing_teardown_is_reported_and_the_others_still_run():
    code = TEARDOWNS.format(start="") + "_lifecycle.at_exit(lambda: 1 / 0)\n"
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["exiting False", "second False", "first False"], result.stdout
    assert "ZeroDivisionError" in result.stderr


def test_at_exit_takes_a_callable():
    from popdist import _lifecycle

    with pytest.raises(TypeError, match="at_exit: expected a callable"):
        _lifecycle.at_exit(42)


def test_the_current_topology_is_the_cores():
    import popdist
    from popdist import _api, _core

    assert popdist.topology() is _core.topology()  # one object, held by the core
    assert not any(hasattr(_api, name) for name in ("_current", "_live", "_local_ids"))
