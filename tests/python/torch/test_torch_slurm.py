"""popdist.torch under the Slurm testbed's srun (2 nodes, one task each, --mpi=pmix): the same checks
as under the other launchers. Needs a running testbed cluster, which only CTest's fixture starts
(tests/torch/CMakeLists.txt sets POPDIST_SLURM_CLUSTER=1 and SLURM_CONF for this file); a plain
pytest run skips it."""

import os
import shutil

import pytest

from ddp_expectations import check_job
from launching import python, reports, run

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")


@pytest.mark.skipif(os.environ.get("POPDIST_SLURM_CLUSTER") != "1",
                    reason="needs the Slurm testbed cluster: run by CTest as torch.slurm (label slurm)")
@pytest.mark.skipif(shutil.which("srun") is None, reason="srun (Slurm) is not on PATH")
def test_srun_two_nodes(tmp_path):
    # srun forwards the whole environment, SLURM_CONF included.
    result = run(["srun", "-N2", "-n2", "--ntasks-per-node=1", "--mpi=pmix", "--time=2",
                  *python("ddp_checks.py", tmp_path)], timeout=200, SLURM_CONF=os.environ["SLURM_CONF"])
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    assert {r["launcher"] for r in found.values()} == {"slurm"}
    check_job(found, 2)


@pytest.mark.skipif(os.environ.get("POPDIST_SLURM_CLUSTER") != "1",
                    reason="needs the Slurm testbed cluster: run by CTest as torch.slurm (label slurm)")
@pytest.mark.skipif(shutil.which("srun") is None, reason="srun (Slurm) is not on PATH")
def test_lightning_srun_two_nodes(tmp_path):
    # Lightning would read Slurm itself; with PopdistEnvironment the ranks come from popdist's slurm
    # family, and instance 0 alone writes the checkpoint.
    pytest.importorskip("lightning", reason="popdist.lightning needs Lightning (pip install lightning)")
    result = run(["srun", "-N2", "-n2", "--ntasks-per-node=1", "--mpi=pmix", "--time=4",
                  *python("lightning_checks.py", tmp_path)], timeout=300, SLURM_CONF=os.environ["SLURM_CONF"])
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stderr
    for index, r in found.items():
        assert r["trainer_kwargs"] == {"devices": 1, "num_nodes": 2}
        assert (r["global_rank"], r["world_size"], r["local_rank"], r["node_rank"]) == (index, 2, 0, index)
        assert r["is_global_zero"] == (index == 0)
    assert found[0]["weights"] == found[1]["weights"], "weights differ after Lightning DDP training"
    checkpoints = sorted(p.name for p in (tmp_path / "run").rglob("*.ckpt"))
    assert len(checkpoints) == 1, f"expected one checkpoint file written by instance 0, found {checkpoints}"


@pytest.mark.skipif(os.environ.get("POPDIST_SLURM_CLUSTER") != "1",
                    reason="needs the Slurm testbed cluster: run by CTest as torch.slurm (label slurm)")
@pytest.mark.skipif(shutil.which("srun") is None, reason="srun (Slurm) is not on PATH")
def test_traceback_behind_torchs_excepthook_srun():
    # As test_torch_errors.py under popdist run and mpirun: instance 1 raises after
    # init_process_group() (torch wrapped the hook); its traceback reaches srun's stderr.
    result = run(["srun", "-N2", "-n2", "--ntasks-per-node=1", "--mpi=pmix", "--time=2", "--kill-on-bad-exit=1",
                  *python("uncaught_after_torch.py", "raise")], timeout=200, SLURM_CONF=os.environ["SLURM_CONF"])
    assert result.returncode != 0
    assert "unreachable" not in result.stdout
    for line in ("[rank1]: Traceback (most recent call last):", "[rank1]: ValueError: boom on instance 1"):
        assert line in result.stderr, result.stderr
