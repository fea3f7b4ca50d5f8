"""`popdist run` as a drop-in for torchrun: scripts written for torchrun's variables (torch's env://
rendezvous, HuggingFace Accelerate) run unchanged under `popdist run`, on one host and on two fake
hosts (the testbed's fake_rsh.sh); popdist.torch keeps working with those variables present; a
taken MASTER_PORT is an error naming the port, not a hang; an unmodified Lightning script takes
popdist run's MASTER_ADDR/MASTER_PORT (with or without mpi4py, on a host whose name resolves
nowhere, on two fake hosts). Real torch, Accelerate and Lightning, no mocks."""

import json
import os
import shutil

import pytest

from ddp_expectations import check_job
from launching import fake_host_testbed, free_port, popdist_cli, python, reports, run, taken_port

pytest.importorskip("torch", reason="the drop-in checks need PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun,
              pytest.mark.skipif(os.environ.get("POPDIST_TORCH_DROPIN") != "1",
                                 reason="about 2 minutes of jobs: run by CTest as torch.dropin (POPDIST_TORCH_DROPIN=1)")]


def popdist_run(instances, *command, hosts=None, options=()):
    """`popdist run` argv; with `hosts`, on the testbed's fake hosts (skips when it is absent)."""
    cli = popdist_cli()
    if cli is None:
        pytest.skip("the popdist command is not installed (pip install .)")
    argv = [cli, "run", "--num-instances", str(instances), *options]
    if hosts:
        bed = fake_host_testbed()
        if bed is None:
            pytest.skip("the fake-host testbed (fake_rsh.sh) is absent: set POPDIST_TESTBED")
        argv += ["--host", hosts, "--mpi-global-args", f"--mca plm_rsh_agent {bed / 'fake_rsh.sh'}"]
    return [*argv, "--", *command]


def check_torchrun_contract(found, hosts):
    """Every instance saw torchrun's variables as torchrun defines them (instances divided evenly)."""
    instances = len(found)
    per_host = instances // hosts
    endpoints = set()
    for index, r in found.items():
        env = r["environment"]
        assert (env["RANK"], env["WORLD_SIZE"]) == (str(index), str(instances)), env
        assert (env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"]) == (str(index % per_host), str(per_host)), env
        assert (env["GROUP_RANK"], env["GROUP_WORLD_SIZE"]) == (str(index // per_host), str(hosts)), env
        endpoints.add((env["MASTER_ADDR"], env["MASTER_PORT"]))
    assert len(endpoints) == 1, f"instances got different MASTER_ADDR/MASTER_PORT: {endpoints}"
    return endpoints.pop()


def test_torch_env_script_one_host_with_the_users_master_port(tmp_path):
    port = free_port()
    result = run(popdist_run(2, *python("torch_env_script.py", tmp_path)), MASTER_PORT=str(port))
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    assert check_torchrun_contract(found, 1) == ("127.0.0.1", str(port))  # one host: loopback; the user's port
    assert all(r["all_reduce"] == 3 for r in found.values())


def test_torch_env_script_two_fake_hosts(tmp_path):
    result = run(popdist_run(2, *python("torch_env_script.py", tmp_path), hosts="hostA,hostB"), TMPDIR=str(tmp_path))
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    address, _ = check_torchrun_contract(found, 2)
    assert not address.startswith("127."), "across hosts MASTER_ADDR must be an address the other hosts reach"
    assert all(r["all_reduce"] == 3 for r in found.values())


@pytest.mark.parametrize("hosts", [None, "hostA,hostB"], ids=["one_host", "two_fake_hosts"])
def test_accelerate_script(tmp_path, hosts):
    pytest.importorskip("accelerate", reason="the Accelerate check needs HuggingFace Accelerate (pip install accelerate)")
    result = run(popdist_run(2, *python("accelerate_script.py", tmp_path), hosts=hosts), timeout=240,
                 TMPDIR=str(tmp_path))
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    for index, r in found.items():
        assert (r["process_index"], r["num_processes"]) == (index, 2), r
        assert r["local_process_index"] == (0 if hosts else index), r
        assert r["distributed_type"] == "DistributedType.MULTI_CPU", r
        assert r["gathered"] == [0, 1], r
        assert r["batches"] == 4, r  # Accelerate sharded the 8 batches between the 2 processes
    assert found[0]["weights"] == found[1]["weights"], "weights differ after Accelerate's DDP training"


def test_popdist_torch_two_fake_hosts(tmp_path):
    # popdist.torch under popdist run, where torchrun's variables are present: its own rendezvous,
    # popdist's detection (Open MPI) unchanged.
    result = run(popdist_run(2, *python("ddp_checks.py", tmp_path), hosts="hostA,hostB"), TMPDIR=str(tmp_path))
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    assert {r["launcher"] for r in found.values()} == {"openmpi"}
    check_job(found, 2)


def test_taken_master_port_is_an_error_naming_it(tmp_path):
    with taken_port() as port:
        result = run(popdist_run(2, *python("torch_env_script.py", tmp_path), options=["--master-port", str(port)]),
                     timeout=120)
    assert result.returncode != 0
    assert str(port) in result.stderr and "EADDRINUSE" in result.stderr, result.stderr


def test_collective_left_in_flight_at_exit_does_not_abort(tmp_path):
    """popdist run's Python start-up hook tears torch.distributed down at exit, while the interpreter
    is whole, for a script that never imports popdist (tools/agent/python_startup/sitecustomize.py).
    The script leaves a collective in flight at exit; without the hook about half its runs abort
    (status 134), so three clean runs in a row are the hook's doing."""
    for attempt in range(3):
        out = tmp_path / f"run{attempt}"
        out.mkdir()
        result = run(popdist_run(2, *python("torch_unwaited_at_exit.py", out)), TMPDIR=str(tmp_path))
        found = reports(out, result, 2)
        assert result.returncode == 0, f"run {attempt}: {result.stderr}"
        assert "terminate called" not in result.stderr, result.stderr
        assert sorted(r["rank"] for r in found.values()) == [0, 1]


def unshared_hostname(argv):
    """argv in a UTS namespace whose host name resolves nowhere (root and unshare(1) needed)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a made-up host name needs root and unshare(1)")
    return ["unshare", "--uts", "sh", "-c", 'hostname popdist-unresolvable-host && exec "$@"', "sh", *argv]


def check_lightning_used_popdist_run(found, instances):
    """Lightning took torchrun's environment, and with it popdist run's MASTER_ADDR/MASTER_PORT."""
    for index, r in found.items():
        assert r["environment"] == "TorchElasticEnvironment", r
        assert (r["global_rank"], r["world_size"]) == (index, instances), r
        assert [r["main_address"], str(r["main_port"])] == r["master"], r
    assert len({tuple(r["master"]) for r in found.values()}) == 1, found
    assert len({json.dumps(r["weights"]) for r in found.values()}) == 1, "weights differ after Lightning's DDP"


@pytest.mark.parametrize("case", ["mpi4py", "hide-mpi4py", "unresolvable-host"])
def test_unmodified_lightning_uses_popdist_runs_rendezvous(tmp_path, case):
    pytest.importorskip("lightning", reason="the Lightning check needs Lightning (pip install lightning)")
    argv = popdist_run(2, *python("lightning_unmodified.py", tmp_path, 2, 1, case))
    if case == "unresolvable-host":
        argv = unshared_hostname(argv)
    result = run(argv, timeout=240)
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    check_lightning_used_popdist_run(found, 2)
    assert found[0]["master"][0] == "127.0.0.1", found[0]  # one host: loopback


def test_unmodified_lightning_two_fake_hosts(tmp_path):
    pytest.importorskip("lightning", reason="the Lightning check needs Lightning (pip install lightning)")
    result = run(popdist_run(2, *python("lightning_unmodified.py", tmp_path, 1, 2), hosts="hostA,hostB"),
                 timeout=240, TMPDIR=str(tmp_path))
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    check_lightning_used_popdist_run(found, 2)
    assert not found[0]["master"][0].startswith("127."), found[0]
