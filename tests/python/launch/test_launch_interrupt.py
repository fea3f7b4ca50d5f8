"""Ctrl-C in the caller of popdist.launch ends the job and leaves nothing running: a script that
launches two sleeping instances gets SIGINT (what Ctrl-C and a Jupyter interrupt send), raises
KeyboardInterrupt, and no process whose command line names the job's directory remains. The
same when the caller is killed outright (a Jupyter kernel killed or restarted): the job ends."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

# The caller as a terminal or a Jupyter kernel runs it: with Python's own SIGINT handler. A test run
# that a shell started in the background (`cmd &` without job control) inherits SIGINT ignored, and
# Python keeps an inherited SIG_IGN: the caller would never see the test's Ctrl-C, and the job
# would run on until the test's timeout.
SCRIPT = textwrap.dedent("""
    import signal
    import sys
    import launch_functions
    import popdist

    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        popdist.launch(launch_functions.sleep_after_mark, sys.argv[1], num_instances=2, shared_dir=sys.argv[1])
    except KeyboardInterrupt:
        print("KeyboardInterrupt reached the caller", flush=True)
        sys.exit(3)
""")


def _wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds  # a bound against a hang, not a timed assertion
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.1)
    return predicate()


def _job_processes(marker):
    return subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout.splitlines()


def _start_caller(tmp_path):
    """The caller script, once both instances run; and the directory its job's processes name."""
    directory = tmp_path / f"popdist-launch-interrupt-{uuid.uuid4().hex}"
    directory.mkdir()
    script = tmp_path / "caller.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))
    caller = subprocess.Popen([sys.executable, str(script), str(directory)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        assert _wait_for(lambda: len(list(directory.glob("started.*"))) == 2, 120), "the instances did not start"
        assert _job_processes(directory.name), "no process names the job's directory"
    except BaseException:
        caller.kill()
        raise
    return caller, directory


def test_a_killed_caller_ends_the_job(tmp_path):
    caller, directory = _start_caller(tmp_path)
    caller.kill()  # SIGKILL: nothing of the caller runs any more
    caller.communicate(timeout=60)
    try:
        assert _wait_for(lambda: not _job_processes(directory.name), 30), _job_processes(directory.name)
    finally:
        subprocess.run(["pkill", "-KILL", "-f", directory.name], check=False)  # what a failure left


def test_ctrl_c_ends_the_job_and_leaves_nothing_running(tmp_path):
    caller, directory = _start_caller(tmp_path)
    try:
        caller.send_signal(signal.SIGINT)
        output, _ = caller.communicate(timeout=120)
    finally:
        if caller.poll() is None:
            caller.kill()
    assert caller.returncode == 3, output
    assert "KeyboardInterrupt reached the caller" in output
    assert _wait_for(lambda: not _job_processes(directory.name), 10), _job_processes(directory.name)
