"""popdist.comm(): mpi4py communicators over registered sets (mpi4py initialized MPI first here)."""

import gc

from mpi4py import MPI

import popdist
from mpi_helpers import RANK, SIZE, needs_ranks


def test_world_scope_is_an_mpi4py_communicator_congruent_to_world():
    comm = popdist.comm()
    assert isinstance(comm, MPI.Intracomm)
    assert (comm.Get_size(), comm.Get_rank()) == (SIZE, RANK)
    assert MPI.Comm.Compare(comm, MPI.COMM_WORLD) in (MPI.IDENT, MPI.CONGRUENT)
    assert comm.allreduce(RANK) == SIZE * (SIZE - 1) // 2


@needs_ranks(2)
def test_subset_communicator_and_none_for_non_members():
    members = {0, SIZE - 1}
    comm = popdist.comm(participants=members)
    if RANK in members:
        assert comm.Get_size() == 2
        assert sorted(comm.allgather(RANK)) == sorted(members)
    else:
        assert comm is None


def test_named_communicator():
    popdist.registerCommunicator({0}, "solo")
    comm = popdist.comm("solo")
    if RANK == 0:
        assert comm.Get_size() == 1
    else:
        assert comm is None


def test_handle_stays_owned_by_popdist():
    comm = popdist.comm()
    handle = MPI._handleof(comm)
    del comm
    gc.collect()  # mpi4py must not free popdist's communicator
    again = popdist.comm()
    assert MPI._handleof(again) == handle
    again.Barrier()


def test_numpy_allreduce_through_comm():
    import numpy

    buffer = numpy.full(4, float(RANK + 1))
    total = numpy.empty_like(buffer)
    popdist.comm().Allreduce(buffer, total, op=MPI.SUM)
    assert (total == SIZE * (SIZE + 1) / 2).all()
