"""No error is lost: an uncaught exception after popdist.torch.init_process_group() (torch has then
wrapped sys.excepthook and buffers stderr while the inner hooks run) prints its traceback, tagged
like the instance's other output, before the job ends; popdist's own UsageError too. Under
`popdist run` and plain `mpirun`. Real torch (gloo on CPU)."""

import os

import pytest

from launching import mpirun_argv, popdist_run_argv, python, run

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun,
              pytest.mark.skipif(os.environ.get("POPDIST_TORCH_DROPIN") != "1",
                                 reason="launches several torch jobs: run by CTest as torch.dropin (POPDIST_TORCH_DROPIN=1)")]

LAUNCHERS = {"popdist_run": popdist_run_argv, "mpirun": mpirun_argv}


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_traceback_of_an_uncaught_exception(launcher):
    result = run(LAUNCHERS[launcher](2, *python("uncaught_after_torch.py", "raise")), timeout=120)
    assert result.returncode != 0
    assert "unreachable" not in result.stdout
    # torch's hook prefixes every line with [rank1]:, popdist run's relay tags it with the instance.
    tag = "[1,1]<stderr>:" if launcher == "popdist_run" else ""
    for line in ("[rank1]: Traceback (most recent call last):", "[rank1]: ValueError: boom on instance 1"):
        assert f"{tag}{line}" in result.stderr, result.stderr


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_traceback_of_popdists_own_usage_error(launcher):
    result = run(LAUNCHERS[launcher](2, *python("uncaught_after_torch.py", "usage")), timeout=120)
    assert result.returncode != 0
    assert "unreachable" not in result.stdout
    assert "Traceback (most recent call last):" in result.stderr, result.stderr
    assert "popdist.errors.UsageError: popdist.torch.DistributedSampler: the instances passed different seeds" \
        in result.stderr, result.stderr
