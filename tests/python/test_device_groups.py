"""getDeviceId needs an instance's devices (local replicas x IPUs per replica) to be 1 or a power
of two, because IPUs are attached in groups of 1, 2, 4, 8, ...; any other count is an error naming
the counts. getLocalDeviceOrdinals has no such rule. Each case in a fresh interpreter (the
topology is detected once per process)."""

import pytest

from helpers import RAISES_SCRIPT, run_json

ORDINALS_SCRIPT = """
import json, popdist
print(json.dumps({"ordinals": popdist.getLocalDeviceOrdinals(), "dict": popdist.topology().to_dict()["device_id"]}))
"""


@pytest.mark.parametrize("local_replicas,ipus,devices", [(3, 1, 3), (1, 6, 6), (3, 2, 6), (5, 4, 20)])
def test_a_share_that_is_not_a_power_of_two_has_no_device_id(env, local_replicas, ipus, devices):
    env(POPDIST_NUM_TOTAL_REPLICAS=local_replicas, POPDIST_NUM_LOCAL_REPLICAS=local_replicas,
        POPDIST_NUM_IPUS_PER_REPLICA=ipus)
    got = run_json(RAISES_SCRIPT.format(call="getDeviceId()"))
    assert got["type"] == "TopologyError" and got["popdist_error"], got
    assert f"{local_replicas} local replicas x {ipus} devices per replica = {devices} devices" in got["message"]
    assert "1 or a power of two" in got["message"]
    # the plain ordinals stay free of the rule; the topology's dict says there is no id
    plain = run_json(ORDINALS_SCRIPT)
    assert plain["ordinals"] == list(range(devices)) and plain["dict"] is None


def test_the_argument_counts_too(env):
    env(POPDIST_NUM_TOTAL_REPLICAS=1, POPDIST_NUM_LOCAL_REPLICAS=1)
    got = run_json(RAISES_SCRIPT.format(call="getDeviceId(3)"))
    assert got["type"] == "TopologyError" and "1 local replicas x 3 devices per replica = 3 devices" in got["message"]


@pytest.mark.parametrize("local_replicas,ipus,expected", [(1, 1, 0), (2, 1, 2), (4, 1, 6), (1, 8, 14), (2, 4, 14)])
def test_powers_of_two_keep_their_ids(env, local_replicas, ipus, expected):
    env(POPDIST_NUM_TOTAL_REPLICAS=local_replicas, POPDIST_NUM_LOCAL_REPLICAS=local_replicas,
        POPDIST_NUM_IPUS_PER_REPLICA=ipus)
    got = run_json(RAISES_SCRIPT.format(call="getDeviceId()"))
    assert got["type"] is None
    assert run_json("import json, popdist; print(json.dumps(popdist.getDeviceId()))") == expected
