"""Ctrl-C works inside a blocking call: SIGINT to an instance waiting in synchronize() raises
KeyboardInterrupt there within the waits' 50 ms poll (measured and printed, not asserted: speed
belongs to the benchmarks), and the uncaught KeyboardInterrupt ends the job as any uncaught
exception does, so nobody is left waiting."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from test_launch import MPIRUN, SCRIPTS, environment

pytestmark = [pytest.mark.mpirun]


@pytest.mark.parametrize("form", ["untimed", "timed"])
def test_sigint_in_synchronize_raises_keyboard_interrupt_and_ends_the_job(form):
    # Instance 1 would come only after 300 s: the test's timeout fails a wait for it.
    argv = [MPIRUN, "-np", "2", "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH", sys.executable,
            str(SCRIPTS / "interrupted_wait.py"), "300", form]
    env = environment()
    env.setdefault("PYTHONPATH", "")
    job = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                           start_new_session=True)
    try:
        for line in job.stdout:
            waiting = re.search(r"waiting pid (\d+)", line)
            if waiting:
                break
        assert waiting, "instance 0 did not start waiting"
        time.sleep(1.0)  # inside synchronize() by now (it prints just before)
        sent = time.time()
        os.kill(int(waiting.group(1)), signal.SIGINT)
        out, _ = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        pytest.fail("SIGINT did not end the wait (or the job)")
    interrupted = re.search(r"instance 0: KeyboardInterrupt at ([0-9.]+)", out)
    assert interrupted, out
    assert job.returncode != 0 and "synchronize returned" not in out, out
    print(f"{form}: KeyboardInterrupt {(float(interrupted.group(1)) - sent) * 1000:.0f} ms after SIGINT")
