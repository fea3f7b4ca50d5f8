"""When the host barrier's shared memory cannot be made -- here /dev/shm is full: a private mount
namespace with a filled 4 KiB tmpfs there -- init() still succeeds: every instance agrees to use
MPI_Barrier instead and says so once, naming /dev/shm. Never a null dereference, never a job split
between the two barriers, never init() hanging (Open MPI's MPI_Win_allocate_shared failed on the
host's leader alone there, and the others waited inside it: issue 37)."""

import os
import re
import subprocess
import sys

import pytest

from test_mpirun_jobs import MPIRUN, environment

pytestmark = [pytest.mark.mpirun]

SCRIPT = r"""
import popdist
popdist.init()
for _ in range(3):
    popdist.synchronize()
popdist.synchronize(timeout=30)
popdist.execute_on_instances({0, 1}, popdist.synchronize)
# One write per line (its "\n" with it): the instances share mpirun's output, and print() under
# PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
print(f"instance {popdist.getInstanceIndex()}: barriers ok\n", end="", flush=True)
"""

# Mounts a filled 4 KiB tmpfs on /dev/shm in a mount namespace of its own, then runs the job.
WITH_FULL_SHM = ('mount -t tmpfs -o size=4k tmpfs /dev/shm || exit 77; '
                 'head -c 65536 /dev/zero > /dev/shm/full 2>/dev/null; exec "$@"')


def unshare_command():
    """The way to a private mount namespace, or a skip naming what is missing."""
    if os.geteuid() == 0:
        return ["unshare", "--mount"]
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("cannot mount a tmpfs on /dev/shm: not root, and no unprivileged user namespaces")
    return ["unshare", "--user", "--map-root-user", "--mount"]


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_full_dev_shm_falls_back_to_mpi_barrier(ranks):
    argv = [*unshare_command(), "sh", "-c", WITH_FULL_SHM, "sh", MPIRUN, "-np", str(ranks), "--oversubscribe",
            "--bind-to", "none", "-x", "PYTHONPATH", sys.executable, "-c", SCRIPT]
    env = environment(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("PYTHONPATH", "")
    result = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=env, check=False)
    if result.returncode == 77:
        pytest.skip("mounting a tmpfs on /dev/shm was refused")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(re.findall(r"instance (\d+): barriers ok", result.stdout)) == [str(i) for i in range(ranks)]
    warnings = re.findall(r"shared memory of the host barrier is not usable on every instance \(this one: "
                          r"([^)]+)\); synchronize\(\) over all instances uses MPI_Barrier instead", result.stderr)
    assert len(warnings) == ranks, result.stderr
    assert sum("/dev/shm/popdist-" in w and "No space left on device" in w for w in warnings) == 1, warnings
