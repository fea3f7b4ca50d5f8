"""Bad arguments are rejected by name before any MPI is involved."""

import math

import pytest

import popdist


@pytest.mark.parametrize(
    ("call", "named"),
    [
        # This process is a job of one instance, not initialized: the core's rules, without MPI,
        # under the Python API's names.
        (lambda: popdist.synchronize(participants=[0, 0]),
         r"^synchronize\(participants=\.\.\.\): duplicate participant 0 in \[0, 0\]: each instance may appear once$"),
        (lambda: popdist.synchronize(participants=[0, 1]),
         r"^synchronize\(participants=\.\.\.\): participant 1 out of range: valid instance indices are 0\.\.0 \(1 instance\)$"),
        (lambda: popdist.synchronize(participants=[0, "1"]), "participants must hold integer instance indices, got '1'"),
        (lambda: popdist.synchronize(participants=[0, 1.0]), "got 1.0"),
        (lambda: popdist.synchronize(participants=[True]), "got True"),
        (lambda: popdist.synchronize(participants=5), "participants must be an iterable"),
        (lambda: popdist.synchronize(participants="01"), "participants must be an iterable"),
        (lambda: popdist.synchronize(participants=[10**30]), "participant 10{30} out of range"),
        (lambda: popdist.synchronize(communicator_id=3), "communicator_id must be a str, got 3"),
        (lambda: popdist.synchronize("never-registered"),
         r"unknown communicator id 'never-registered'.*registerCommunicator\(participants, 'never-registered'\)"),
        (lambda: popdist.synchronize(timeout=-1), r"^synchronize: timeout=-1 seconds is not a timeout"),
        (lambda: popdist.synchronize(timeout=math.nan), r"^synchronize: timeout=nan seconds is not a timeout"),
        (lambda: popdist.synchronize(timeout=0), r"^synchronize: timeout=0 seconds is ambiguous"),
        (lambda: popdist.synchronize(timeout=0.0), "timeout=0 seconds is ambiguous"),
        (lambda: popdist.synchronize(timeout=-math.inf), "timeout=-inf seconds"),
        (lambda: popdist.synchronize(timeout=-(10**400)), "timeout=-inf seconds"),
        (lambda: popdist.synchronize(timeout="1"), "timeout must be a number of seconds or None, got '1'"),
        (lambda: popdist.synchronize(timeout=True), "timeout must be a number of seconds or None, got True"),
        (lambda: popdist.registerCommunicator([0, 0]), r"^registerCommunicator: duplicate participant 0"),
        (lambda: popdist.registerCommunicator([2]), r"^registerCommunicator: participant 2 out of range"),
        (lambda: popdist.registerCommunicator([]), r"^registerCommunicator: the set of participants is empty"),
        (lambda: popdist.registerCommunicator(None), "participants must be an iterable"),
        (lambda: popdist.execute_on_instances([0, 0], print), r"^execute_on_instances: duplicate participant 0"),
        (lambda: popdist.execute_on_instances(iter([3]), print), r"^execute_on_instances: participant 3 out of range"),
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
    from popdist import _core

    def check(values, allow_empty=False):
        return _core.checked_instances(values, 3, "f", "participants", allow_empty)

    assert check(range(3)) == [0, 1, 2]
    assert check(i for i in [2, 0]) == [0, 2]
    assert check({2, 1}) == [1, 2]
    assert check(frozenset(), allow_empty=True) == []
    numpy = pytest.importorskip("numpy", reason="numpy is not installed")
    assert check(numpy.arange(2)) == [0, 1]


def test_the_timeout_rule():
    from popdist import _core

    assert _core.checked_timeout(None, "f") is None
    assert _core.checked_timeout(2, "f") == 2.0
    assert _core.checked_timeout(0.001, "f") == 0.001
    assert _core.checked_timeout(math.inf, "f") == math.inf
    assert _core.checked_timeout(10**400, "f") == math.inf  # beyond a double: no limit either


def test_argument_errors_do_not_load_mpi():
    import sys

    with pytest.raises(popdist.UsageError):
        popdist.synchronize(participants=[1, 1])
    assert "popdist._mpi" not in sys.modules
