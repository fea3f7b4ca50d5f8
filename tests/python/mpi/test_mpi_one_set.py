"""One set, one barrier (design.md §5.2): the members of a set meet whichever way each names it (a
bare synchronize(), participants=, an id registered for it, execute_on_instances over it), and
members that name different, overlapping sets learn from a timed call which set each one used."""

import re

import pytest
from mpi4py import MPI

import popdist
from mpi_helpers import RANK, SIZE, needs_ranks

EVERYONE = range(SIZE)
PAIR = {0, 1}


def named(members, name, form):
    """synchronize over `members`, registered as `name`, named the `form`-th of four ways."""
    bare = members == set(EVERYONE)  # outside execute_on_instances, the bare call is over all instances
    ways = [
        lambda **timed: popdist.synchronize(**timed) if bare else popdist.synchronize(participants=members, **timed),
        lambda **timed: popdist.synchronize(participants=members, **timed),
        lambda **timed: popdist.synchronize(name, **timed),
        lambda **timed: popdist.synchronize(participants=sorted(members, reverse=True), **timed),
    ]
    return ways[form % len(ways)]


def test_all_instances_meet_however_each_names_them():
    popdist.registerCommunicator(EVERYONE, "one-set-everyone")  # the root's set: no MPI call
    assert popdist.comm("one-set-everyone").Get_size() == SIZE
    for shift in range(4):  # every rank tries every form, against the other ranks' other forms
        named(set(EVERYONE), "one-set-everyone", RANK + shift)()
        named(set(EVERYONE), "one-set-everyone", RANK + shift)(timeout=30)
    MPI.COMM_WORLD.Barrier()


def test_a_subset_meets_however_each_member_names_it_inside_and_outside_execute_on_instances():
    popdist.registerCommunicator(PAIR, "one-set-pair")
    for shift in range(4):
        named(PAIR, "one-set-pair", RANK + shift)()
        named(PAIR, "one-set-pair", RANK + shift)(timeout=30)
        # Inside execute_on_instances over the pair, a bare synchronize() is over the pair too.
        inside = [lambda: popdist.synchronize(), named(PAIR, "one-set-pair", RANK + shift)][(RANK + shift) % 2]
        popdist.execute_on_instances(PAIR, inside)
        popdist.execute_on_instances(PAIR, lambda: popdist.synchronize(timeout=30) if (RANK + shift) % 2 else
                                     popdist.synchronize("one-set-pair", timeout=30))
    MPI.COMM_WORLD.Barrier()


@needs_ranks(3)
@pytest.mark.abandons_world  # it abandons {0, 1}, {1, 2} and {0, 2}: after the tests that use them
def test_overlapping_sets_name_the_set_each_member_used():
    # A cycle: 0 waits over {0, 1}, 1 over {1, 2}, 2 over {0, 2}; nobody's set is complete.
    sets = {0: {0, 1}, 1: {1, 2}, 2: {0, 2}}
    MPI.COMM_WORLD.Barrier()  # the three start together: their deadlines are close
    if RANK in sets:
        with pytest.raises(popdist.TimeoutError) as error:
            popdist.synchronize(participants=sets[RANK], timeout=2)
        message = str(error.value)
        missing = {0: 1, 1: 2, 2: 0}[RANK]
        other = "{" + ", ".join(map(str, sorted(sets[missing]))) + "}"
        assert error.value.missing_instances == [missing], message
        assert re.search(rf"instance {missing} waited in synchronize over {re.escape(other)}", message), message
        assert "named different sets" in message
    MPI.COMM_WORLD.Barrier()
