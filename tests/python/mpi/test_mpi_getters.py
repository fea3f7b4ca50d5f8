"""Under mpirun, after init(): the getters agree with MPI."""

from mpi4py import MPI

import popdist
from mpi_helpers import RANK, SIZE, STARTUP


def test_mpi4py_initialized_mpi_before_popdist_init():
    assert STARTUP == {"mpi_initialized_before_popdist_init": True, "backend_initialized_before_init": False}
    assert popdist.isBackendInitialized()


def test_instance_identity_is_the_mpi_rank():
    assert popdist.getInstanceIndex() == RANK
    assert popdist.getNumInstances() == SIZE
    assert popdist.isPopdistEnvSet() is True  # a launcher started us, with no POPDIST_* at all
    assert popdist.topology().launcher == "openmpi"


def test_local_identity_matches_the_shared_memory_split():
    shared = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        assert popdist.getLocalInstanceIndex() == shared.Get_rank()
        assert popdist.topology().num_local_instances == shared.Get_size()
        assert popdist.topology().host_index == 0  # established by init() on one host
    finally:
        shared.Free()


def test_replica_getters_default_to_one_replica_per_instance():
    assert popdist.getNumLocalReplicas() == 1
    assert popdist.getNumTotalReplicas() == SIZE
    assert popdist.getReplicaIndexOffset() == RANK
    assert popdist.getNumIpusPerReplica() == 1 and popdist.checkNumIpusPerReplica(1)
    assert popdist.isUniformReplicasPerInstance() is True


def test_device_ids_are_distinct_and_ordinals_local():
    ids = MPI.COMM_WORLD.allgather(popdist.getDeviceId())
    assert len(set(ids)) == SIZE
    ordinals = MPI.COMM_WORLD.allgather(popdist.getLocalDeviceOrdinals())
    assert sorted(o for each in ordinals for o in each) == list(range(SIZE))  # one host: 0..N-1


def test_init_is_idempotent_and_topology_stable():
    before = popdist.topology()
    popdist.init()
    assert popdist.topology() == before and popdist.isBackendInitialized()
    views = MPI.COMM_WORLD.allgather(before.to_dict())
    assert [v["instance_index"] for v in views] == list(range(SIZE))
    assert {(v["num_total_replicas"], v["ipus_per_replica"]) for v in views} == {(SIZE, 1)}
