"""popdist.torch across two hosts that are network namespaces (the testbed's netns_setup.sh: h1 and
h2, each with its own network stack, eth0 = 10.200.0.<i>). Here a peer's loopback is not instance
0's: the rendezvous must pick instance 0's eth0 address. Needs the namespaces, which only CTest's
fixture creates (tests/torch/CMakeLists.txt sets POPDIST_NETNS_HOSTS=1 and POPDIST_TESTBED for
this file); a plain pytest run skips it."""

import os
from pathlib import Path

import pytest

from ddp_expectations import check_job
from launching import python, reports, run

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")

# As tests/netns/netns_checks.py: TCP over eth0 for Open MPI's runtime and MPI; the agent scrubs
# the environment like ssh, so settings are options and -x, not inherited variables.
OPEN_MPI_ARGS = ["--mca", "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include", "eth0", "--mca", "pml", "ob1",
                 "--mca", "mpi_yield_when_idle", "1", "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH",
                 "-x", "OMP_NUM_THREADS"]


@pytest.mark.skipif(os.environ.get("POPDIST_NETNS_HOSTS") != "1",
                    reason="needs the network-namespace hosts h1, h2: run by CTest as torch.netns (label netns)")
def test_two_namespace_hosts(tmp_path):
    testbed = Path(os.environ["POPDIST_TESTBED"])
    result = run([testbed / "on_host.sh", "h1", "mpirun", "--mca", "plm_rsh_agent", testbed / "netns_rsh.sh",
                  "--host", "h1:1,h2:1", "-np", "2", *OPEN_MPI_ARGS, *python("ddp_checks.py", tmp_path)], timeout=200)
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    check_job(found, 2)
    # Instance 1's own loopback is not instance 0's: it must have reached instance 0 over eth0.
    assert found[1]["store_address"] == "10.200.0.1", found[1]["store_address"]


@pytest.mark.skipif(os.environ.get("POPDIST_NETNS_HOSTS") != "1",
                    reason="needs the network-namespace hosts h1, h2: run by CTest as torch.netns (label netns)")
def test_torch_env_script_under_popdist_run(tmp_path):
    # An unmodified env:// script: MASTER_ADDR is h1 as the launching host (h1) resolves it, which
    # h2 reaches over eth0.
    testbed = Path(os.environ["POPDIST_TESTBED"])
    cli = os.environ.get("POPDIST_CLI") or "popdist"
    mpi_args = " ".join(OPEN_MPI_ARGS[:12] + ["--mca", "plm_rsh_agent", str(testbed / "netns_rsh.sh")])
    result = run([testbed / "on_host.sh", "h1", cli, "run", "--num-instances", "2", "--host", "h1,h2",
                  "--mpi-global-args", mpi_args, "--", *python("torch_env_script.py", tmp_path)], timeout=200)
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    assert [found[i]["environment"]["MASTER_ADDR"] for i in (0, 1)] == ["10.200.0.1"] * 2
    assert all(r["all_reduce"] == 3 for r in found.values())
