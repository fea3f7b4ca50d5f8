#!/usr/bin/env python3
"""Where is everyone? `popdist stacks` on real `popdist run` jobs (tools/stacks/stack_report.hpp):
a 2-instance torch job whose instances hang in two places, and how the command finds a job.
Usage: stack_checks.py <check> <popdist>."""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from launcher_common import CheckFailed, check, describe, main, mpi_test_environment, processes_with, run, skip

# Instance 0 waits in an all_reduce that instance 1 never joins; instance 1 sleeps inside a
# DataLoader's iteration (num_workers=0: __getitem__ runs in its main thread).
HANGING_JOB = """\
import os, sys, time
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        time.sleep(3600)  # HANG-IN-GETITEM
        return index


def main():
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    print(f"ready {rank} {os.environ.get('POPDIST_RUN_JOB_DIR')}", flush=True)
    if rank == 0:
        dist.all_reduce(torch.ones(1))  # HANG-IN-ALL-REDUCE
    else:
        for _ in DataLoader(SlowDataset(), num_workers=0):
            pass


main()
"""

# Generous bounds: a loaded 2-core machine imports torch slowly. None is a timed assertion.
START_DEADLINE = 240


def popdist_env(popdist):
    return mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))


def line_of(text, marker):
    return next(number for number, line in enumerate(text.splitlines(), 1) if marker in line)


def summary_line(report, index):
    return next((line for line in report.splitlines() if line.startswith(f"  instance {index}: ")), "")


def torch_job(popdist):
    """The issue's test: the report names the all_reduce line in instance 0 and the __getitem__
    sleep in instance 1; SIGTERM to popdist run then ends the job, leaving nothing running."""
    try:
        import torch  # noqa: F401 - only whether it is there
    except ImportError:
        skip("torch is not installed (.ci/install-deps installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        token = f"stacks{os.getpid()}x{int(time.time())}"
        script = os.path.join(tmp, f"hang_{token}.py")
        with open(script, "w") as f:
            f.write(HANGING_JOB)
        env = dict(popdist_env(popdist), TMPDIR=tmp, PYTHONUNBUFFERED="1")
        # popdist run exports POPDIST_RUN_JOB_DIR; the instances print the one they got
        job = subprocess.Popen([popdist, "run", "--num-instances", "2", "--", sys.executable, script],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
        try:
            check_hanging_job(popdist, env, job, script, token)
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()


def check_hanging_job(popdist, env, job, script, token):
    job_dir, output = wait_for_ready(job)
    all_reduce_line = line_of(HANGING_JOB, "HANG-IN-ALL-REDUCE")
    sleep_line = line_of(HANGING_JOB, "HANG-IN-GETITEM")
    # Ready is printed before each instance reaches its hang: ask until both are there.
    deadline = time.monotonic() + START_DEADLINE
    report = ""
    while time.monotonic() < deadline:
        result = run([popdist, "stacks", "--job-dir", job_dir], env=env, timeout=60)
        check(result.returncode == 0, f"popdist stacks failed: {describe(result)}")
        report = result.stdout
        if (f"{script}:{all_reduce_line} in main" in summary_line(report, 0) and
                f"{script}:{sleep_line} in __getitem__" in summary_line(report, 1)):
            break
        time.sleep(1)
    print(report)
    first = summary_line(report, 0)
    check(" in all_reduce" in first and f"{script}:{all_reduce_line} in main" in first,
          f"instance 0 must be named in all_reduce, called from line {all_reduce_line}:\n{report}")
    check(summary_line(report, 1).startswith(f"  instance 1: {script}:{sleep_line} in __getitem__"),
          f"instance 1 must be named in __getitem__'s sleep, line {sleep_line}:\n{report}")
    for index in (0, 1):
        check(f"\ninstance {index} (pid " in report and "    main thread 0x" in report,
              f"instance {index}'s full dump is missing:\n{report}")
    # Without --job-dir: the one running job under $TMPDIR (its popdist-run.pid, which popdist run writes)
    found = run([popdist, "stacks"], env=env, timeout=60)
    check(found.returncode == 0 and f"of the job in {job_dir}" in found.stdout, f"discovery: {describe(found)}")
    # The signal changed nothing: both instances still hang where they were.
    check(job.poll() is None, f"the job ended after the stack report: {job.returncode}\n{output}")
    job.send_signal(signal.SIGTERM)
    try:
        rest, _ = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        raise CheckFailed("popdist run did not end after SIGTERM")
    check(job.returncode != 0, f"SIGTERM must end the job with a failure status: {job.returncode}\n{output}{rest}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and processes_with(token):
        time.sleep(0.1)
    check(not processes_with(token), f"processes left running after SIGTERM: {processes_with(token)}")
    print(f"both instances named; popdist run ended with {job.returncode} after SIGTERM; nothing left")


def wait_for_ready(job):
    """Reads the job's output until both instances said ready; returns their job directory."""
    output, ready = "", {}
    deadline = time.monotonic() + START_DEADLINE
    while len(ready) < 2:
        check(time.monotonic() < deadline, f"the instances did not start:\n{output}")
        line = job.stdout.readline()
        check(line, f"the job ended before both instances were ready (exit {job.poll()}):\n{output}")
        output += line
        words = line.split("ready ", 1)[-1].split() if "ready " in line else []
        if len(words) == 2:
            ready[int(words[0])] = words[1]
    check(len(set(ready.values())) == 1, f"the instances got different job directories: {ready}")
    return ready[0], output


def job_discovery(popdist):
    """Without --job-dir: none running is an error; several are listed and --job-dir asked for. Only
    this user's popdist-run-* directories whose popdist-run.pid is a live process count."""
    env = popdist_env(popdist)
    with tempfile.TemporaryDirectory() as tmp:
        env["TMPDIR"] = tmp
        result = run([popdist, "stacks"], env=env)
        check(result.returncode == 1 and "no running popdist run job of yours" in result.stderr, describe(result))
        for name, pid in (("popdist-run-a", os.getpid()), ("popdist-run-b", os.getpid()),
                          ("popdist-run-gone", dead_pid()), ("not-a-job", os.getpid())):
            os.mkdir(os.path.join(tmp, name))
            with open(os.path.join(tmp, name, "popdist-run.pid"), "w") as f:
                f.write(f"{pid}\n")
        os.mkdir(os.path.join(tmp, "popdist-run-nopid"))
        result = run([popdist, "stacks"], env=env)
        check(result.returncode == 1 and "2 running popdist run jobs; choose one with --job-dir" in result.stderr,
              describe(result))
        listed = result.stderr
        check(all(os.path.join(tmp, name) in listed for name in ("popdist-run-a", "popdist-run-b")) and
              not any(os.path.join(tmp, name) in listed for name in ("popdist-run-gone", "popdist-run-nopid", "not-a-job")),
              describe(result))
        # one job: popdist run is asked through its stacks.sock; none listens behind these fakes
        os.remove(os.path.join(tmp, "popdist-run-b", "popdist-run.pid"))
        result = run([popdist, "stacks"], env=env)
        socket_path = os.path.join(tmp, "popdist-run-a", "stacks.sock")
        check(result.returncode == 1 and f"cannot reach popdist run at {socket_path}" in result.stderr,
              describe(result))
        result = run([popdist, "stacks", "--job-dir", os.path.join(tmp, "missing")], env=env)
        check(result.returncode == 2 and "--job-dir" in result.stderr, describe(result))
        print("none, several, one and a named job: as documented")


# Started with popdist run's start-up hook: says it is ready, waits for a file, starts a child Python
# (which must leave the instance's files alone), then says it went on.
HOOKED = """\
import os, subprocess, sys, threading, time
print("ready", os.getpid(), threading.main_thread().ident, flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
subprocess.run([sys.executable, "-c", "pass"], check=True)
print("went on", flush=True)
"""


def start_up_hook(popdist):
    """The start-up hook on its own (python3 with it on PYTHONPATH, as popdist run starts instances):
    it records the pid and main thread, SIGURG dumps every thread into the stacks file and the
    program goes on, a child Python does not take the instance's files, and a directory it cannot
    write, or no POPDIST_RUN_JOB_DIR, changes nothing."""
    hook = os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(popdist)), "..", "share", "popdist",
                                         "python-startup"))
    check(os.path.exists(os.path.join(hook, "sitecustomize.py")), f"no start-up hook in {hook}")
    with tempfile.TemporaryDirectory() as job_dir:
        go_on = os.path.join(job_dir, "go-on")
        env = dict(os.environ, PYTHONPATH=hook, POPDIST_RUN_JOB_DIR=job_dir, RANK="3")
        env.pop("_POPDIST_RUN_STACKS_OF", None)
        program = subprocess.Popen([sys.executable, "-c", HOOKED, go_on], env=env, stdout=subprocess.PIPE, text=True)
        try:
            words = program.stdout.readline().split()
            check(words[:1] == ["ready"], f"the program did not start: {words}")
            with open(os.path.join(job_dir, "instance3.python")) as f:
                marker = f.read()
            check(f"pid={words[1]} thread={words[2]} host=" in marker, f"marker {marker!r}, program said {words}")
            os.kill(program.pid, signal.SIGURG)
            stacks = os.path.join(job_dir, "instance3.stacks")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and "in <module>\n" not in read(stacks):
                time.sleep(0.05)
            # (still in its print, or in the waiting loop)
            dumped = read(stacks)
            check(re.search(r'File "<string>", line [2-4] in <module>\n', dumped), f"SIGURG dumped {dumped!r}")
            open(go_on, "w").close()
            rest, _ = program.communicate(timeout=60)
        finally:
            if program.poll() is None:
                program.kill()
        check(program.returncode == 0 and rest == "went on\n", f"exit {program.returncode}, output {rest!r}")
        with open(os.path.join(job_dir, "instance3.python")) as f:
            check(f.read() == marker, "a child Python replaced the instance's marker")
        check(sorted(os.listdir(job_dir)) == ["go-on", "instance3.python", "instance3.stacks"], os.listdir(job_dir))
    for job_dir in ("/nonexistent/popdist-run-x", ""):
        env = dict(os.environ, PYTHONPATH=hook, POPDIST_RUN_JOB_DIR=job_dir, RANK="0")
        result = run([sys.executable, "-c", "print('fine')"], env=env)
        check(result.returncode == 0 and result.stdout == "fine\n" and result.stderr == "",
              f"POPDIST_RUN_JOB_DIR={job_dir!r}: {describe(result)}")
    print("marker, dump on SIGURG, the program going on, a child leaving the files alone, an unwritable directory")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def dead_pid():
    """The pid of a process that has ended (and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


CHECKS = {"torch-job": torch_job, "job-discovery": job_discovery, "start-up-hook": start_up_hook}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
