"""registerCommunicator and synchronize under mpirun: scopes, subsets, ids, errors, timeouts, GIL."""

import itertools
import math
import os
import tempfile
import threading
import time

import pytest
from mpi4py import MPI

import popdist
from mpi_helpers import RANK, SIZE, needs_ranks, run_while_ticking


def shared_directory():
    """A directory every rank sees (one host), chosen by rank 0."""
    path = tempfile.mkdtemp(prefix="popdist-sync-") if RANK == 0 else None
    return MPI.COMM_WORLD.bcast(path)


def test_bare_synchronize_is_a_barrier_over_all_instances():
    directory = shared_directory()
    marker = os.path.join(directory, "rank0-arrived")
    if RANK == 0:
        time.sleep(0.2)  # everyone else is (most likely) waiting already
        open(marker, "w").close()
    popdist.synchronize()
    assert os.path.exists(marker)  # nobody left before instance 0 arrived


@needs_ranks(2)
def test_synchronize_over_participants_and_non_members_return_at_once():
    directory = shared_directory()
    members = {0, SIZE - 1}
    marker = os.path.join(directory, "member0-arrived")
    if RANK == 0:
        time.sleep(0.2)
        open(marker, "w").close()
    popdist.synchronize(participants=members)
    if RANK in members:
        assert os.path.exists(marker)
    popdist.synchronize(participants=[SIZE - 1, 0])  # any iterable, same set, cached communicator


def test_register_communicator_by_id_then_synchronize_by_id():
    popdist.registerCommunicator(range(SIZE), "everyone")
    popdist.registerCommunicator(range(SIZE), "everyone")  # again: no-op
    popdist.synchronize("everyone")
    popdist.synchronize(communicator_id="everyone", timeout=30)


@needs_ranks(2)
def test_same_id_for_another_set_names_both_sets():
    popdist.registerCommunicator({0, 1}, "pair")
    with pytest.raises(popdist.UsageError) as error:
        popdist.registerCommunicator({0}, "pair")
    message = str(error.value)
    assert "pair" in message and "0, 1" in message


def test_unknown_id_is_a_usage_error():
    with pytest.raises(popdist.UsageError, match="no-such-id"):
        popdist.synchronize("no-such-id")


def test_out_of_range_participant_is_named():
    with pytest.raises(popdist.UsageError, match=str(SIZE + 3)):
        popdist.synchronize(participants={0, SIZE + 3})
    with pytest.raises(popdist.UsageError, match="-1"):
        popdist.registerCommunicator({-1, 0})


@needs_ranks(2)
@pytest.mark.abandons_world
def test_timeout_names_the_missing_instance_and_late_arrival_fails_too():
    missing = SIZE - 1
    name = "timeout-test"
    everyone = set(range(SIZE))
    if RANK != missing:
        with pytest.raises(popdist.TimeoutError) as error:
            popdist.synchronize(name, everyone, timeout=0.5)
        assert error.value.missing_instances == [missing]
        assert str(missing) in str(error.value)
        assert isinstance(error.value, TimeoutError)  # the builtin too
        MPI.COMM_WORLD.Barrier()  # now let the late one arrive
    else:
        MPI.COMM_WORLD.Barrier()  # arrive only after everyone else gave up
        with pytest.raises(popdist.TimeoutError):
            popdist.synchronize(name, everyone, timeout=0.5)


def test_timed_synchronize_succeeds_when_everyone_arrives():
    popdist.synchronize(participants=range(SIZE), timeout=30)
    popdist.synchronize(timeout=30)


@needs_ranks(2)
def test_blocking_synchronize_releases_the_gil():
    # While this thread waits in the barrier, another Python thread must keep running.
    ticks = run_while_ticking(popdist.synchronize)
    if RANK != 0:
        assert ticks >= 10, "the ticker thread did not run while synchronize() waited"


def test_hostile_participants_are_read_only_up_to_the_job_size():
    # Each call fails before any MPI on every instance (the same arguments everywhere), with a
    # short message; an endless iterator is read only up to SIZE + 5 values.
    taken = []

    def endless():
        for value in itertools.count():
            taken.append(value)
            yield value

    calls = [
        (lambda: popdist.synchronize(participants=range(10**18)), "1,000,000,000,000,000,000 participants"),
        (lambda: popdist.registerCommunicator(itertools.repeat(0)), f"more than {SIZE + 5} participants"),
        (lambda: popdist.execute_on_instances(endless(), print), f"more than {SIZE + 5} participants"),
        (lambda: popdist.synchronize(participants=[SIZE] * 10**6), f"out of range: {SIZE}; repeated: {SIZE}"),
        (lambda: popdist.synchronize("x" * 10**6), "... (1,000,000 bytes)"),
    ]
    for call, says in calls:
        with pytest.raises(popdist.UsageError) as raised:
            call()
        assert says in str(raised.value) and len(str(raised.value)) < 600, str(raised.value)[:1000]
    assert len(taken) == SIZE + 6


def test_errors_name_the_python_call_and_infinity_means_no_limit():
    # The same rule and wording as a single uninitialized process (tests/python/test_arguments.py).
    with pytest.raises(popdist.UsageError, match=rf"^registerCommunicator: participant {SIZE} out of range: valid "
                                                 rf"instance indices are 0\.\.{SIZE - 1} \({SIZE} instances?\)$"):
        popdist.registerCommunicator([0, SIZE])
    with pytest.raises(popdist.UsageError, match=r"^synchronize\(participants=\.\.\.\): duplicate participant 0"):
        popdist.synchronize(participants=[0, 0])
    with pytest.raises(popdist.UsageError, match=r"^synchronize: timeout=0 seconds is ambiguous"):
        popdist.synchronize(timeout=0)
    if SIZE > 1:  # a runtime error, renamed at the binding: the Python name, not register_communicator
        popdist.registerCommunicator({0}, "named-twice")
        with pytest.raises(popdist.UsageError, match=r"^registerCommunicator: communicator id 'named-twice' already names"):
            popdist.registerCommunicator(range(SIZE), "named-twice")
    popdist.synchronize(participants=range(SIZE), timeout=math.inf)
    popdist.synchronize(timeout=math.inf)


def test_threads_calling_untimed_synchronize_at_once_take_turns():
    # 4 threads per instance, at once, over the host barrier's set (all) and a communicator's: each
    # call is one whole barrier, so every instance makes as many and nobody is left waiting.
    members = set(range(SIZE)) if SIZE < 3 else {0, SIZE - 1}
    errors = []

    def calls():
        try:
            for _ in range(25):
                popdist.synchronize()
                popdist.synchronize(participants=members)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread is still in synchronize after 120 s"
    assert errors == []
    popdist.synchronize(timeout=30)  # and the instances still agree on every count


@needs_ranks(2)
def test_a_timed_synchronize_does_not_wait_for_another_threads_turn():
    directory = shared_directory()
    marker = os.path.join(directory, "refused")
    if RANK == 0:
        holder = threading.Thread(target=popdist.synchronize)  # waits for the others: holds the turn
        holder.start()
        time.sleep(2)  # the holder is inside its barrier by now
        with pytest.raises(popdist.UsageError) as error:
            popdist.synchronize(timeout=5)
        open(marker, "w").close()
        holder.join(timeout=60)
        assert not holder.is_alive()
        message = str(error.value)
        assert "another thread of this instance" in message and "does not wait for its turn" in message
    else:
        deadline = time.monotonic() + 60
        while not os.path.exists(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        popdist.synchronize()
