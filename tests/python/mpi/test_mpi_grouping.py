"""Replica grouping communicators under mpirun (one replica per instance here)."""

import pytest

import popdist
from mpi_helpers import RANK, SIZE


@pytest.mark.skipif(SIZE % 2 != 0, reason=f"needs an even number of ranks (running {SIZE})")
def test_one_communicator_per_group():
    grouping = popdist.ReplicaGrouping(SIZE, 2)  # {0,1}, {2,3}, ...
    ids = popdist.registerGroupingCommunicators(grouping)
    my_group = grouping.group_of(popdist.getReplicaIndexOffset())
    assert list(ids) == [my_group]
    popdist.synchronize(ids[my_group])
    comm = popdist.comm(ids[my_group])
    assert sorted(comm.allgather(RANK)) == grouping.instances_hosting(my_group)


def test_instances_hosting_under_the_current_topology():
    grouping = popdist.ReplicaGrouping(SIZE)  # one group of everyone
    assert grouping.instances_hosting(0) == list(range(SIZE))
    ids = popdist.registerGroupingCommunicators(grouping)
    assert list(ids) == [0]
    popdist.synchronize(ids[0], timeout=30)
