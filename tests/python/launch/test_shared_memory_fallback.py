"""When Open MPI cannot set up the host barrier's shared-memory window (here: its osc/sm component
excluded, so MPI_Win_allocate_shared fails on every instance; under load the segment's file was
seen to vanish), init() still succeeds: every instance agrees to use MPI_Barrier instead and
says so once. Never a null dereference, never a job split between the two barriers."""

import re

import pytest

from test_launch import mpirun

pytestmark = [pytest.mark.mpirun]

SCRIPT = """
import popdist
popdist.init()
for _ in range(3):
    popdist.synchronize()
popdist.synchronize(timeout=30)
popdist.execute_on_instances({0, 1}, popdist.synchronize)
print(f"instance {popdist.getInstanceIndex()}: barriers ok", flush=True)
"""


@pytest.mark.parametrize("ranks", [2, 3])
def test_an_unusable_shared_window_falls_back_to_mpi_barrier(ranks):
    result = mpirun(ranks, "-c", SCRIPT, timeout=90, OMPI_MCA_osc="^sm")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(re.findall(r"instance (\d+): barriers ok", result.stdout)) == [str(i) for i in range(ranks)]
    warnings = re.findall(r"shared-memory window of the host barrier is not usable on every instance \(this one: "
                          r"[^)]+\); synchronize\(\) over all instances uses MPI_Barrier instead", result.stderr)
    assert len(warnings) == ranks, result.stderr
