"""Bad arguments are rejected by name before any MPI is involved."""

import math

import pytest

import popdist


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: popdist.synchronize(participants=[0, 1, 1]), r"participants lists instance\(s\) \[1\] more than once"),
        (lambda: popdist.synchronize(participants=[0, "1"]), "participants must hold integer instance indices, got '1'"),
        (lambda: popdist.synchronize(participants=[0, 1.0]), "got 1.0"),
        (lambda: popdist.synchronize(participants=[True]), "got True"),
        (lambda: popdist.synchronize(participants=5), "participants must be an iterable"),
        (lambda: popdist.synchronize(participants="01"), "participants must be an iterable"),
        (lambda: popdist.synchronize(communicator_id=3), "communicator_id must be a str, got 3"),
        (lambda: popdist.synchronize(timeout=-1), "timeout must be >= 0 seconds, got -1"),
        (lambda: popdist.synchronize(timeout=math.nan), "timeout must be >= 0 seconds, got nan"),
        (lambda: popdist.synchronize(timeout="1"), "timeout must be a number of seconds or None, got '1'"),
        (lambda: popdist.registerCommunicator([2, 2]), r"participants lists instance\(s\) \[2\] more than once"),
        (lambda: popdist.registerCommunicator(None), "participants must be an iterable"),
        (lambda: popdist.execute_on_instances([0, 0], print), r"instances lists instance\(s\) \[0\] more than once"),
        (lambda: popdist.execute_on_instances({0}, "print"), "func must be callable, got 'print'"),
        (lambda: popdist.getDeviceId(-1), "ipusPerReplica must be >= 0"),
        (lambda: popdist.getDeviceId(1.5), "ipusPerReplica must be an integer, got 1.5"),
        (lambda: popdist.checkNumIpusPerReplica("2"), "numIpusPerReplica must be an integer, got '2'"),
        (lambda: popdist.registerGroupingCommunicators(4), "expected a popdist.ReplicaGrouping, got 4"),
    ],
)
def test_bad_arguments_raise_usage_error_naming_them(call, named):
    with pytest.raises(popdist.UsageError, match=named):
        call()


def test_any_iterable_of_ints_is_accepted_by_the_checks():
    from popdist import _api

    assert _api._instance_set("participants", range(3)) == {0, 1, 2}
    assert _api._instance_set("participants", (i for i in [2, 0])) == {0, 2}
    assert _api._instance_set("participants", frozenset()) == set()
    numpy = pytest.importorskip("numpy", reason="numpy is not installed")
    assert _api._instance_set("participants", numpy.arange(2)) == {0, 1}


def test_argument_errors_do_not_load_mpi():
    import sys

    with pytest.raises(popdist.UsageError):
        popdist.synchronize(participants=[1, 1])
    assert "popdist._mpi" not in sys.modules
