"""popdist.torch under real launchers: `popdist run` and plain `mpirun` at 1-3 instances, two fake
hosts (the testbed's fake_rsh.sh), torchrun, and the rendezvous failures (port taken, address
unreachable). Every instance runs scripts/ddp_checks.py and writes what it saw; the checks here
compare the instances. Real torch (gloo on CPU), no mocks."""

import sys

import pytest

from ddp_expectations import check_job
from launching import MPIRUN, fake_host_testbed, free_port, mpirun_argv, popdist_run_argv, python, reports, run, taken_port

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun]


@pytest.mark.parametrize("instances", [1, 2, 3])
def test_popdist_run(tmp_path, instances):
    result = run(popdist_run_argv(instances, *python("ddp_checks.py", tmp_path)))
    found = reports(tmp_path, result, instances)
    assert result.returncode == 0, result.stderr
    check_job(found, instances)


# One instance under mpirun is the same world of one as under `popdist run` (no rendezvous, no MPI
# collective): 2 and 3 are the cases that differ.
@pytest.mark.parametrize("instances", [2, 3])
def test_mpirun(tmp_path, instances):
    result = run(mpirun_argv(instances, *python("ddp_checks.py", tmp_path)))
    found = reports(tmp_path, result, instances)
    assert result.returncode == 0, result.stderr
    assert {r["launcher"] for r in found.values()} == {"openmpi"}
    check_job(found, instances)


def test_two_fake_hosts(tmp_path):
    bed = fake_host_testbed()
    if bed is None:
        pytest.skip("the fake-host testbed (fake_rsh.sh) is absent: set POPDIST_TESTBED")
    # The agent scrubs the environment as ssh does: -x carries what the instances need.
    extra = ["--mca", "plm_rsh_agent", str(bed / "fake_rsh.sh"), "--host", "hostA:2,hostB:1",
             "-x", "OMPI_MCA_btl_tcp_if_include", "-x", "OMPI_MCA_mpi_yield_when_idle", "-x", "OMPI_MCA_pml"]
    result = run(mpirun_argv(3, *python("ddp_checks.py", tmp_path), extra=extra), TMPDIR=str(tmp_path))
    found = reports(tmp_path, result, 3)
    assert result.returncode == 0, result.stderr
    check_job(found, 3)


def test_torchrun(tmp_path):
    # `python -m torch.distributed.run` is torchrun, with this interpreter (a `torchrun` on PATH may
    # belong to another environment).
    result = run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                  *python("ddp_checks.py", tmp_path)[1:]])
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    assert {r["launcher"] for r in found.values()} == {"torchrun"}
    check_job(found, 2)


def test_taken_port_is_an_error_on_every_instance(tmp_path):
    with taken_port() as port:
        result = run(mpirun_argv(2, *python("ddp_checks.py", tmp_path, "failure"), extra=["-x", "MASTER_PORT"]),
                     MASTER_PORT=str(port), CHECK_TIMEOUT="10")
    found = reports(tmp_path, result, 2)
    for r in found.values():
        assert r["error"] and r["error"]["type"] == "RendezvousError" and r["error"]["is_popdist_error"], r
        assert f"127.0.0.1:{port}" in r["error"]["message"] and "address already in use" in r["error"]["message"]
        assert r["seconds"] < 10, r


def test_unreachable_address_is_an_error_within_the_timeout(tmp_path):
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned, so nothing answers there.
    port = free_port()
    result = run(mpirun_argv(2, *python("ddp_checks.py", tmp_path, "failure"),
                             extra=["-x", "MASTER_ADDR", "-x", "MASTER_PORT", "-x", "CHECK_TIMEOUT"]),
                 MASTER_ADDR="192.0.2.1", MASTER_PORT=str(port), CHECK_TIMEOUT="3")
    found = reports(tmp_path, result, 2)
    for r in found.values():
        assert r["error"] and r["error"]["type"] == "RendezvousError", r
        assert f"192.0.2.1:{port}" in r["error"]["message"], r["error"]["message"]
        assert r["seconds"] < 3 * 3 + 5, r  # torch's client retries once within the timeout; margin for load


if MPIRUN is None:
    pytestmark.append(pytest.mark.skip(reason="mpirun (Open MPI) is not on PATH"))


# Under `popdist run` nothing sets RANK; under mpirun only OMPI_* do: in both, Lightning must learn
# every rank from PopdistEnvironment (one checkpoint writer, the others silent).
def torchrun_argv(instances, *command):
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(instances),
            *command[1:]]


# One script, every launcher: its loaders are built before fit() (under torchrun the instances then
# agree on the seed through torchrun's agent store: no process group exists yet).
@pytest.mark.parametrize("launch", [popdist_run_argv, mpirun_argv, torchrun_argv], ids=["popdist_run", "mpirun", "torchrun"])
def test_lightning(tmp_path, launch):
    pytest.importorskip("lightning", reason="popdist.lightning needs Lightning (pip install lightning)")
    result = run(launch(2, *python("lightning_checks.py", tmp_path)), timeout=240)
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    for index, r in found.items():
        assert r["trainer_kwargs"] == {"devices": 2, "num_nodes": 1}
        assert (r["global_rank"], r["world_size"], r["local_rank"], r["node_rank"]) == (index, 2, index, 0)
        assert r["is_global_zero"] == (index == 0)
        assert r["sampler"] == "DistributedSampler"  # Lightning kept popdist's sampler
        assert r["validated"] == ["val_loss"], r["validated"]
        message = r["mismatch_error"]
        assert message and "asks for 3 processes" in message and "job has 2 instances" in message, message
        warned = r["set_world_size_warnings"]
        assert len(warned) == 1 and "asks for 3 processes" in warned[0] and "ignored" in warned[0], warned
    assert found[0]["weights"] == found[1]["weights"], "weights differ after Lightning DDP training"
    assert sum(r["predicted_samples"] for r in found.values()) == 32, "predict() did not cover the data set once"
    checkpoints = sorted(p.name for p in (tmp_path / "run").rglob("*.ckpt"))
    assert len(checkpoints) == 1, f"expected one checkpoint file written by instance 0, found {checkpoints}"


def test_an_outsider_learns_nothing_from_the_store_and_writes_nothing(tmp_path):
    """Instance 0 starts a process outside the job (same user, no secret) against the job's store:
    torch's client, the raw protocol with a wrong answer, and the port through non-loopback addresses.
    (popdist run and mpirun reach the same rendezvous code: one launcher suffices.)"""
    result = run(mpirun_argv(2, *python("store_outsider.py", tmp_path)))
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    assert {r["store_class"] for r in found.values()} == {"JobStore"}
    assert {r["sum"] for r in found.values()} == {3.0}
    outsider = found[0]["outsider"]
    assert isinstance(outsider, dict), f"the outsider failed: {outsider}"
    assert "tcpstore_keys" not in outsider, f"torch's client listed the job's keys: {outsider}"
    assert outsider.get("challenge_bytes") == 32, outsider
    assert outsider.get("reply_after_bad_answer", "") == "", f"the store answered a client without the secret: {outsider}"
    assert found[0]["evil_key_present"] is False
    # one host: the store listens on 127.0.0.1 only
    assert outsider["reached_through"] == [], f"the store is reachable beyond loopback: {outsider}"
