"""popdist.topology(): a read-only object with a useful repr and to_dict() keyed like the CLI's JSON."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import popdist
from helpers import launcher_variables

CLI_KEYS = [
    "launcher", "instance_index", "num_instances", "local_instance_index", "num_local_instances", "host_index",
    "num_local_replicas", "num_total_replicas", "replica_index_offset", "ipus_per_replica",
    "uniform_replicas_per_instance", "popdist_env_set", "device_id", "provenance", "warnings",
]
SLURM_NO_NODE = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "POPDIST_NUM_LOCAL_REPLICAS": "2"}


def test_to_dict_has_exactly_the_cli_keys_in_order():
    assert list(popdist.topology().to_dict()) == CLI_KEYS
    assert list(popdist.TOPOLOGY_KEYS) == CLI_KEYS


def test_fields_and_provenance():
    t = popdist.detect(SLURM_NO_NODE)
    assert (t.launcher, t.instance_index, t.num_instances, t.num_local_replicas, t.num_total_replicas) == (
        "openmpi", 2, 4, 2, 8)
    assert t.host_index is None  # Open MPI gives no node index (OMPI_COMM_WORLD_NODE_RANK is not one)
    assert t.provenance["instance_index"] == "OMPI_COMM_WORLD_RANK"
    assert t.provenance["num_local_replicas"] == "POPDIST_NUM_LOCAL_REPLICAS"
    assert t.to_dict()["host_index"] is None
    json.dumps(t.to_dict())  # JSON-serializable as is


def test_topology_is_read_only():
    t = popdist.topology()
    with pytest.raises(AttributeError, match="read-only"):
        t.instance_index = 3
    with pytest.raises(AttributeError, match="read-only"):
        del t.launcher
    t.provenance["instance_index"] = "tampered"
    t.to_dict()["warnings"].append("tampered")
    assert t.provenance.get("instance_index") != "tampered" and "tampered" not in t.warnings


def test_repr_names_the_fields_and_str_describes():
    t = popdist.detect(SLURM_NO_NODE)
    text = repr(t)
    assert text.startswith("popdist.Topology(") and "instance_index=2" in text and "launcher='openmpi'" in text
    assert "OMPI_COMM_WORLD_RANK" in str(t)  # describe() shows provenance


def test_local_device_ordinals_attribute():
    assert popdist.detect({**SLURM_NO_NODE, "OMPI_COMM_WORLD_LOCAL_RANK": "1",
                           "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}).local_device_ordinals == [2, 3]


def _popdist_command():
    # The installed command (pip install .), else the build tree's (tests/python/run.sh exports it).
    candidate = os.environ.get("POPDIST_CLI") or shutil.which("popdist")
    return candidate if candidate and Path(candidate).is_file() else None


@pytest.mark.skipif(_popdist_command() is None, reason="the popdist command is not built/installed (POPDIST_CLI unset, not on PATH)")
def test_to_dict_equals_the_cli_json(monkeypatch):
    command = _popdist_command()  # before POPDIST_* (POPDIST_CLI too) leave the environment
    for name in launcher_variables():
        monkeypatch.delenv(name)
    for name, value in SLURM_NO_NODE.items():
        monkeypatch.setenv(name, value)
    cli = subprocess.run([command, "topology", "--json"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == popdist.detect(SLURM_NO_NODE).to_dict()
