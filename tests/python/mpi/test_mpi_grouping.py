"""Replica grouping communicators under mpirun (one replica per instance here, so replica r lives
on instance r): every valid grouping of the job's replicas."""

import pytest

import popdist
from mpi_helpers import RANK, SIZE


def valid_groupings(replicas):
    for size in range(1, replicas + 1):
        if replicas % size == 0:
            yield size, 1
            if 1 < size < replicas:
                yield size, replicas // size  # stride x size == replicas


@pytest.mark.parametrize(("group_size", "stride"), list(valid_groupings(SIZE)))
def test_one_communicator_per_group(group_size, stride):
    grouping = popdist.ReplicaGrouping(SIZE, group_size, stride)
    ids = popdist.registerGroupingCommunicators(grouping)
    my_group = grouping.group_of(popdist.getReplicaIndexOffset())
    assert list(ids) == [my_group]
    popdist.synchronize(ids[my_group])
    comm = popdist.comm(ids[my_group])
    assert sorted(comm.allgather(RANK)) == grouping.instances_hosting(my_group) == grouping.members(my_group)


def test_instances_hosting_under_the_current_topology():
    grouping = popdist.ReplicaGrouping(SIZE)  # one group of everyone
    assert grouping.instances_hosting(0) == list(range(SIZE))
    ids = popdist.registerGroupingCommunicators(grouping)
    assert list(ids) == [0]
    popdist.synchronize(ids[0], timeout=30)
