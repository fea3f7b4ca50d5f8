"""The getters under controlled environments, each in a fresh interpreter (the topology is detected
once per process): unlaunched defaults, PopRun variables, each launcher family, bad environments."""

import pytest

from helpers import GETTERS_SCRIPT, RAISES_SCRIPT, run_json

import popdist


def test_unlaunched_defaults_are_instance_0_of_1(env):
    got = run_json(GETTERS_SCRIPT)
    assert got["instance"] == 0 and got["instances"] == 1 and got["local_instance"] == 0
    assert got["local_replicas"] == 1 and got["total_replicas"] == 1 and got["offset"] == 0
    assert got["ipus"] == 1 and got["uniform"] is True
    assert got["env_set"] is False
    assert got["backend"] is False
    assert got["device_id"] == 0 and got["ordinals"] == [0]
    assert got["topology"]["launcher"] == "singleton"


def test_poprun_variables_alone_derive_the_instance(env):
    # What PopRun sets for instance 2 of 4, 2 replicas each, 2 IPUs per replica on 16 IPUs.
    env(POPDIST_NUM_TOTAL_REPLICAS=8, POPDIST_NUM_LOCAL_REPLICAS=2, POPDIST_REPLICA_INDEX_OFFSET=4,
        POPDIST_NUM_IPUS_PER_REPLICA=2, POPDIST_LOCAL_INSTANCE_INDEX=0)
    got = run_json(GETTERS_SCRIPT)
    assert (got["instance"], got["instances"]) == (2, 4)
    assert (got["local_replicas"], got["total_replicas"], got["offset"], got["ipus"]) == (2, 8, 4, 2)
    assert got["env_set"] is True and got["uniform"] is True
    # design.md §4: 4 instances x 2 replicas x 2 devices on 16 -> ids 24..27.
    assert got["device_id"] == 26
    assert got["ordinals"] == [0, 1, 2, 3]


@pytest.mark.parametrize("instance", range(4))
def test_device_ids_of_four_instances_are_24_to_27(env, instance):
    env(OMPI_COMM_WORLD_RANK=instance, OMPI_COMM_WORLD_SIZE=4, OMPI_COMM_WORLD_LOCAL_RANK=instance,
        OMPI_COMM_WORLD_LOCAL_SIZE=4, POPDIST_NUM_LOCAL_REPLICAS=2, POPDIST_NUM_IPUS_PER_REPLICA=2)
    got = run_json(GETTERS_SCRIPT)
    assert got["instance"] == instance and got["offset"] == 2 * instance and got["total_replicas"] == 8
    assert got["device_id"] == 24 + instance
    assert got["ordinals"] == list(range(4 * instance, 4 * instance + 4))


def test_one_instance_on_four_devices_is_device_6(env):
    env(POPDIST_NUM_LOCAL_REPLICAS=2, POPDIST_NUM_IPUS_PER_REPLICA=2)
    assert run_json(GETTERS_SCRIPT)["device_id"] == 6
    assert run_json("import json, popdist; print(json.dumps([popdist.getDeviceId(1), popdist.getDeviceId(4)]))") == [
        # ipusPerReplica=1: a partition of 2 devices -> 2 singles, then the pair (id 2);
        # ipusPerReplica=4: a partition of 8 -> 8 singles + 4 pairs + 2 quads, then the octet (id 14).
        2, 14]


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"OMPI_COMM_WORLD_RANK": 3, "OMPI_COMM_WORLD_SIZE": 4, "OMPI_COMM_WORLD_LOCAL_RANK": 1,
          "OMPI_COMM_WORLD_LOCAL_SIZE": 2}, ("openmpi", 3, 4, 1)),
        ({"PMI_RANK": 2, "PMI_SIZE": 3, "MPI_LOCALRANKID": 0, "MPI_LOCALNRANKS": 1}, ("mpich", 2, 3, 0)),
        ({"SLURM_PROCID": 5, "SLURM_STEP_NUM_TASKS": 6, "SLURM_LOCALID": 1, "SLURM_STEP_TASKS_PER_NODE": "2(x3)",
          "SLURM_NODEID": 2, "SLURM_STEP_ID": 0, "SLURM_JOB_ID": 7}, ("slurm", 5, 6, 1)),
        ({"RANK": 1, "WORLD_SIZE": 2, "LOCAL_RANK": 1, "LOCAL_WORLD_SIZE": 2, "GROUP_RANK": 0, "GROUP_WORLD_SIZE": 1,
          "TORCHELASTIC_RUN_ID": "x"}, ("torchrun", 1, 2, 1)),
    ],
    ids=["openmpi", "mpich", "slurm", "torchrun"],
)
def test_each_launcher_family_supplies_the_identity(env, variables, expected):
    env(**variables)
    got = run_json(GETTERS_SCRIPT)
    launcher, instance, instances, local = expected
    assert got["topology"]["launcher"] == launcher
    assert (got["instance"], got["instances"], got["local_instance"]) == (instance, instances, local)
    assert got["env_set"] is True
    assert got["offset"] == instance and got["total_replicas"] == instances


def test_check_num_ipus_per_replica(env):
    check = "import json, popdist; print(json.dumps([popdist.checkNumIpusPerReplica(n) for n in (1, 2, 4)]))"
    assert run_json(check) == [True, False, False]  # unset: only 1 is right
    env(POPDIST_NUM_IPUS_PER_REPLICA=4)
    assert run_json(check) == [False, False, True]


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"OMPI_COMM_WORLD_RANK": "abc", "OMPI_COMM_WORLD_SIZE": 2}, "OMPI_COMM_WORLD_RANK"),
        ({"OMPI_COMM_WORLD_RANK": 1}, "OMPI_COMM_WORLD_SIZE"),
        ({"OMPI_COMM_WORLD_RANK": 4, "OMPI_COMM_WORLD_SIZE": 4}, "OMPI_COMM_WORLD_RANK"),
        ({"POPDIST_NUM_LOCAL_REPLICAS": 0}, "POPDIST_NUM_LOCAL_REPLICAS"),
        ({"POPDIST_NUM_IPUS_PER_REPLICA": "2x"}, "POPDIST_NUM_IPUS_PER_REPLICA"),
        ({"POPDIST_NUM_TOTAL_REPLICAS": "99999999999"}, "POPDIST_NUM_TOTAL_REPLICAS"),
    ],
    ids=["garbage", "half-pair", "rank>=size", "zero-replicas", "trailing-garbage", "overflow"],
)
@pytest.mark.parametrize("call", ["getInstanceIndex()", "isPopdistEnvSet()", "topology()"])
def test_bad_environment_raises_environment_error_naming_the_variable(env, variables, named, call):
    env(**variables)
    got = run_json(RAISES_SCRIPT.format(call=call))
    assert got["type"] == "PopDistEnvironmentError", got
    assert got["module"] == "popdist.errors" and got["popdist_error"] is True
    assert named in got["message"]


def test_launcher_forced_by_popdist_launcher(env):
    env(POPDIST_LAUNCHER="slurm", OMPI_COMM_WORLD_RANK=0, OMPI_COMM_WORLD_SIZE=2, SLURM_PROCID=1,
        SLURM_STEP_NUM_TASKS=2, SLURM_LOCALID=0, SLURM_STEP_TASKS_PER_NODE="1(x2)", SLURM_NODEID=1, SLURM_STEP_ID=0)
    got = run_json(GETTERS_SCRIPT)
    assert got["topology"]["launcher"] == "slurm" and got["instance"] == 1
    assert got["topology"]["host_index"] == 1


def test_detect_is_pure_and_matches_a_launched_process(env):
    variables = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "3"}
    env(**variables)
    launched = run_json(GETTERS_SCRIPT)["topology"]
    assert popdist.detect(variables).to_dict() == launched
    unlaunched = popdist.detect({})
    assert unlaunched == popdist.detect({}) and unlaunched != popdist.detect(variables)
    assert (unlaunched.launcher, unlaunched.num_instances, unlaunched.popdist_env_set) == ("singleton", 1, False)


def test_popdist_core_has_popdists_getters(env):
    # Real scripts call the getters through PopDist's module, e.g. popdist.popdist_core.getInstanceIndex().
    env(POPDIST_NUM_TOTAL_REPLICAS=8, POPDIST_NUM_LOCAL_REPLICAS=2, POPDIST_REPLICA_INDEX_OFFSET=4,
        POPDIST_NUM_IPUS_PER_REPLICA=2, POPDIST_LOCAL_INSTANCE_INDEX=0)
    got = run_json("""
import json
import popdist.popdist_core as core
from popdist import popdist_core
assert popdist_core is core
print(json.dumps({name: getattr(core, name)() for name in (
    "getInstanceIndex", "getNumInstances", "getNumLocalReplicas", "getNumTotalReplicas", "getReplicaIndexOffset",
    "getNumIpusPerReplica", "getLocalInstanceIndex", "getDeviceId", "isPopdistEnvSet",
    "isUniformReplicasPerInstance", "isBackendInitialized")} | {"check": core.checkNumIpusPerReplica(2)}))
""")
    assert got == {"getInstanceIndex": 2, "getNumInstances": 4, "getNumLocalReplicas": 2, "getNumTotalReplicas": 8,
                   "getReplicaIndexOffset": 4, "getNumIpusPerReplica": 2, "getLocalInstanceIndex": 0,
                   "getDeviceId": 26, "isPopdistEnvSet": True, "isUniformReplicasPerInstance": True,
                   "isBackendInitialized": False, "check": True}
    assert popdist.popdist_core.getInstanceIndex is popdist.getInstanceIndex
