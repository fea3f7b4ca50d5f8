"""Two different popdist operations that meet (issue 37): instance 0 in popdist.torch's seed
agreement (building a DataLoader), the others in popdist.synchronize(). With POPDIST_SYNC_TIMEOUT
on every instance, every instance fails within it, naming both operations; none returns as if
it had met the other (they used to meet in one barrier, and then both waited for good). Under
`popdist run` and plain mpirun."""

import re

import pytest

from launching import mpirun_argv, popdist_run_argv, python, run

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun]

LAUNCHERS = {"popdist_run": popdist_run_argv, "mpirun": mpirun_argv}
SEED_AGREEMENT = "popdist.torch.DistributedSampler (allgather of bytes)"


@pytest.mark.parametrize("instances", [2, 3])
@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_synchronize_against_the_seed_agreement_fails_on_both_naming_both(launcher, instances):
    # The bound of "it ended" is generous: the timeout is 2 s.
    result = run(LAUNCHERS[launcher](instances, *python("seed_against_synchronize.py")), timeout=120,
                 POPDIST_SYNC_TIMEOUT="2")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    lines = dict(re.findall(r"instance (\d+): (.*)", result.stdout))
    assert sorted(lines) == [str(i) for i in range(instances)], output
    assert "returned" not in lines.values(), output
    assert SEED_AGREEMENT in lines["0"] and "synchronize" in lines["0"], lines["0"]
    for other in range(1, instances):
        assert f"instance 0 is in {SEED_AGREEMENT}" in lines[str(other)], lines[str(other)]
