"""Ctrl-C works inside every blocking call: SIGINT to an instance waiting in a popdist call for
an instance that has not come raises KeyboardInterrupt there within the waits' 50 ms poll
(measured and printed, not asserted: speed belongs to the benchmarks), and the uncaught
KeyboardInterrupt ends the job as any uncaught exception does, so nobody is left waiting. Under
mpirun and popdist run, and under srun on the Slurm testbed (CTest's interrupts.slurm starts the
cluster; a plain pytest run skips those)."""

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from helpers import popdist_cli
from test_mpirun_jobs import MPIRUN, SCRIPTS, environment

pytestmark = [pytest.mark.mpirun]

# The calls of interrupted_wait.py, and how many instances each job has (a subset needs a third).
FORMS = {"untimed": 2, "timed": 2, "subset": 3, "subset-timed": 3, "register": 3, "execute": 3, "init": 2,
         "torch": 2}


def launch(launcher, instances, *command):
    if launcher == "mpirun":
        return [MPIRUN, "-np", str(instances), "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH", *command]
    if launcher == "srun":  # one node: the instance to signal is a child of this machine's slurmd
        return ["srun", "-N1", "-n", str(instances), "--mpi=pmix", "--time=2", *command]
    cli = popdist_cli()
    if cli is None:
        pytest.skip("the popdist command is not installed (pip install .)")
    return [cli, "run", "--num-instances", str(instances), "--", *command]


def interrupt(launcher, form):
    """Runs the job, sends instance 0 SIGINT while it waits; the delay until KeyboardInterrupt (s)."""
    if form == "torch":
        pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
    # Instance 1 would come only after 300 s: the test's timeout fails a wait for it.
    argv = launch(launcher, FORMS[form], sys.executable, str(SCRIPTS / "interrupted_wait.py"), "300", form)
    env = environment(OMP_NUM_THREADS="1")
    env.setdefault("PYTHONPATH", "")
    job = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                           start_new_session=True)
    lines = []  # (arrival time, line): the delay is measured from the output as it comes
    reader = threading.Thread(target=lambda: lines.extend((time.time(), line) for line in job.stdout), daemon=True)
    try:
        waiting = None
        for line in job.stdout:
            waiting = re.search(r"waiting pid (\d+)", line)
            if waiting:
                break
        assert waiting, "instance 0 did not start waiting"
        time.sleep(1.5)  # inside the call by now (it prints just before)
        reader.start()
        sent = time.time()
        os.kill(int(waiting.group(1)), signal.SIGINT)
        job.wait(timeout=60)
        reader.join(timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{form}: SIGINT did not end the wait (or the job)")
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
        reader.join(timeout=10) if reader.is_alive() else None
        job.stdout.close()
    out = "".join(line for _, line in lines)
    assert job.returncode != 0 and f"{form} returned" not in out, out
    interrupted = re.search(r"instance 0: KeyboardInterrupt at ([0-9.]+)", out)
    if interrupted:
        assert out.count("KeyboardInterrupt") >= 2, out  # the script's line and the traceback
        delay = float(interrupted.group(1)) - sent
    else:
        # Inside MPI_Init_thread (Open MPI's start-up fence), which cannot be left: the instance
        # ends as on an uncaught KeyboardInterrupt (popdist/_lifecycle.py). The delay is
        # until its message reached us (an upper bound).
        ended = [at for at, line in lines if "KeyboardInterrupt: Ctrl-C inside popdist.init()" in line]
        assert form == "init" and ended, out
        delay = ended[0] - sent
    print(f"{launcher} {form}: KeyboardInterrupt {delay * 1000:.0f} ms after SIGINT")
    return delay


@pytest.mark.parametrize("form", sorted(FORMS))
def test_sigint_in_a_blocking_call_raises_keyboard_interrupt_and_ends_the_job(form):
    interrupt("mpirun", form)


@pytest.mark.parametrize("form", ["untimed", "subset-timed", "init"])
def test_sigint_under_popdist_run(form):
    interrupt("popdist run", form)


@pytest.mark.skipif(os.environ.get("POPDIST_SLURM_CLUSTER") != "1",
                    reason="needs the Slurm testbed cluster: run by CTest as interrupts.slurm (label slurm)")
@pytest.mark.skipif(shutil.which("srun") is None, reason="srun (Slurm) is not on PATH")
@pytest.mark.parametrize("form", ["untimed", "subset-timed", "init"])
def test_sigint_under_srun(form):
    interrupt("srun", form)
