#!/usr/bin/env python3
"""Hostile cases of `popdist run` (issue list of docs/guide/failures.md, "Hostile cases"): mpirun
killed, a segfault's core, SIGTSTP/SIGCONT, a closed stdin, nohup, Open MPI's session files.
Each ends as the user would want, with nothing of popdist's left running.
Usage: hostile_checks.py <check> <popdist>."""

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

from launcher_common import check, describe, main, mpi_test_environment, processes_with, run


def popdist_env(popdist, **extra):
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    env["OMP_NUM_THREADS"] = "1"
    env.update(extra)
    return env


def sleepers(token):
    """The `sleep` programs of a job (not the agents or mpirun, whose command lines hold the token too)."""
    found = []
    for pid in processes_with(token):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "sleep":
                    found.append(pid)
        except OSError:
            pass
    return found


def state_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    check(condition(), what)


def sleeping_job(popdist, token, seconds=30, **popen):
    """A 2-instance job whose instances never write and never use MPI."""
    return subprocess.Popen([popdist, "run", "--num-instances", "2", "--", "sleep", f"{seconds}.{token}"],
                            env=popdist_env(popdist), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)


def mpirun_killed(popdist):
    """SIGKILL to mpirun: the agents die with it, and the programs with their agents."""
    token = f"{os.getpid()}{int(time.time())}"
    job = sleeping_job(popdist, token)
    wait_until(lambda: len(sleepers(token)) == 2, 20, "the instances did not start")
    mpirun = [pid for pid in processes_with(token) if open(f"/proc/{pid}/comm").read().strip() in ("mpirun", "orterun", "prterun")]
    check(len(mpirun) == 1, f"one mpirun expected: {mpirun}")
    os.kill(mpirun[0], signal.SIGKILL)
    job.communicate(timeout=30)
    wait_until(lambda: not processes_with(token), 10, f"left running after mpirun's SIGKILL: {processes_with(token)}")


def core_file(popdist):
    """A program killed by SIGSEGV: the agent ends by the same signal without a core of its own."""
    def unlimited_core():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    with tempfile.TemporaryDirectory() as tmp:
        agent = subprocess.Popen([popdist, "_instance", "--plan", "1,1,1,1", "--", "sh", "-c", "kill -SEGV $$"],
                                 env=dict(popdist_env(popdist), OMPI_COMM_WORLD_RANK="0"), cwd=tmp,
                                 preexec_fn=unlimited_core)
        _, status = os.waitpid(agent.pid, 0)
        agent.returncode = 0  # reaped above
    check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV, f"wait status {status:#x}")
    check(not os.WCOREDUMP(status), "the agent dumped a core of its own over the program's")


def stop_and_continue(popdist):
    """SIGTSTP stops every instance (and popdist run); SIGCONT resumes them; the job then ends well."""
    token = f"{os.getpid()}{int(time.time())}"
    job = sleeping_job(popdist, token, seconds=4)
    programs = lambda: sleepers(token)  # noqa: E731
    wait_until(lambda: len(programs()) == 2, 20, "the instances did not start")
    job.send_signal(signal.SIGTSTP)
    wait_until(lambda: all(state_of(pid) == "T" for pid in programs()), 10,
               f"SIGTSTP must stop every instance: {[state_of(p) for p in programs()]}")
    wait_until(lambda: state_of(job.pid) == "T", 10, "popdist run itself stops on SIGTSTP")
    time.sleep(5)  # longer than the programs' sleep: stopped, they cannot end
    check(len(programs()) == 2, "the stopped instances ended")
    job.send_signal(signal.SIGCONT)
    out, err = job.communicate(timeout=30)
    check(job.returncode == 0, f"after SIGCONT the job ends well: {job.returncode} {err}")


def closed_stdin(popdist):
    result = run(["sh", "-c", f"exec {popdist} run --num-instances 2 -- echo done <&-"], env=popdist_env(popdist),
                 timeout=30)
    check(result.returncode == 0 and result.stdout.count("done") == 2, describe(result))


def nohup(popdist):
    """Started with SIGHUP ignored: a hangup of its whole process group leaves the job running."""
    def ignore_hangup():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    job = subprocess.Popen([popdist, "run", "--num-instances", "2", "--", "sh", "-c", "sleep 3; echo finished"],
                           env=popdist_env(popdist), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True, preexec_fn=ignore_hangup)
    time.sleep(1.5)
    os.killpg(job.pid, signal.SIGHUP)
    out, err = job.communicate(timeout=30)
    check(job.returncode == 0 and out.count("finished") == 2, f"the job must go on: {job.returncode} {out} {err}")


def session_files(popdist):
    """Open MPI's session directory is inside popdist run's job directory, removed at the end."""
    with tempfile.TemporaryDirectory() as tmp:
        # (MPI started too: Open MPI refuses some combinations of session settings in MPI_Init)
        result = run([popdist, "run", "--num-instances", "2", "--", sys.executable, "-c",
                      "import os; from mpi4py import MPI; MPI.COMM_WORLD.Barrier(); "
                      "print(os.environ['POPDIST_RUN_JOB_DIR'], os.environ['PMIX_SERVER_TMPDIR'])"],
                     env=popdist_env(popdist, TMPDIR=tmp))
        check(result.returncode == 0, describe(result))
        pairs = [line.split(":", 1)[1].split() for line in result.stdout.splitlines()]
        check(len(pairs) == 2 and all(session.startswith(job + "/") for job, session in pairs), describe(result))
        check(os.listdir(tmp) == [], f"left behind in TMPDIR: {os.listdir(tmp)}")


CHECKS = {"mpirun-killed": mpirun_killed, "core-file": core_file, "stop-and-continue": stop_and_continue,
          "closed-stdin": closed_stdin, "nohup": nohup, "session-files": session_files}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
