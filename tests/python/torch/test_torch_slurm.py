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
