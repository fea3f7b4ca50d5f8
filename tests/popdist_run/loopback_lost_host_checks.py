#!/usr/bin/env python3
"""A lost host on this machine alone: `popdist run` over two of the testbed's fake hosts
(fake_rsh.sh), where hostB's instances stop their own agents (SIGSTOP to the program's parent:
no beat, no end, as when a host's link or machine goes) for STOPPED_FOR seconds and then let them
go on. The netns testbed (tests/netns/lost_host_checks.py) cuts real links; this is the quick
loop's version.

  lost  --host-timeout 2: hostB is named lost (its instances 2 and 3) in the report and in
        --report-file, exit status 122, and nothing of the job is left running.
  off   --host-timeout 0: no host is ever lost -- hostB falls silent for longer than any timeout
        and the job still ends as its programs do (exit 0, no "lost host").
  fenced  the other way (issue 48): popdist run itself stops (SIGSTOP, as a launcher's machine
        that hangs), so its beats stop reaching every host while mpirun and the agents run on;
        every instance's agent and program end within --host-timeout plus the grace period
        (checked by pid), each instance's --log-dir stderr.log says why, and once popdist run
        continues it reports the hosts lost.

Parallel-safe without the helpers' testbed lock: each fake host is a UTS namespace, which is
per-process, and its session files live under this check's own TMPDIR (fake_rsh.sh puts them in
$TMPDIR/fakehost.<host>). Usage: loopback_lost_host_checks.py <lost|off> <popdist> <testbed>.
"""

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from launcher_common import check, describe, fake_hosts_agent, main, mpi_test_environment, processes_with, run, skip

HOST_TIMEOUT = 2
STOPPED_FOR = 5
# Every bound below is the mechanism's own plus slack for a loaded 2-core machine: the start of a
# job on fake hosts, the agents' pause, the host-timeout and the watch's half-second poll, the
# grace (1 s) + 2 s before mpirun's SIGKILL, and the 2 s wait for the agents' last word.
RUN_TIMEOUT = 60


def program(token):
    """Instances 2 and 3 (hostB) stop their agents once those have been heard, and continue them
    after STOPPED_FOR s; instances 0 and 1 (hostA) sleep as long. `token` marks the job's processes."""
    return (f'if [ "$RANK" -ge 2 ]; then sleep 1.5; kill -STOP $PPID; sleep {STOPPED_FOR}; '
            f'kill -CONT $PPID; exit 0; fi; exec sleep {STOPPED_FOR + 2}.{token}')


def run_job(popdist, testbed, host_timeout, tmp, backend="openmpi"):
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    env["TMPDIR"] = tmp  # the fake hosts' session files and the job directory: this check's own
    env["OMP_NUM_THREADS"] = "1"
    token = f"{os.getpid()}{int(time.time())}"
    report = os.path.join(tmp, "report.json")
    agent = fake_hosts_agent(testbed)
    launcher_args = (f"-launcher ssh -launcher-exec {agent}" if backend == "hydra" else f"--mca plm_rsh_agent {agent}")
    command = [popdist, "run", "--backend", backend, "--num-instances", "4", "--host", "hostA,hostB",
               "--host-timeout", str(host_timeout), "--report-file", report, "--mpi-global-args", launcher_args,
               "--", "sh", "-c", program(token)]
    print("+ " + shlex.join(command), flush=True)
    result = run(command, env=env, timeout=RUN_TIMEOUT)
    with open(report) as f:
        return result, json.load(f), token


def nothing_left(token, seconds=15):
    """The job's processes are gone (the agents die with Open MPI's daemons, the programs with
    their agents); after `seconds`, what is left fails the check."""
    deadline = time.monotonic() + seconds
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = processes_with(token)
    check(not left, f"processes left running after the job: {left}")


def lost(popdist, testbed, backend="openmpi"):
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        result, report, token = run_job(popdist, testbed, HOST_TIMEOUT, tmp, backend)
        elapsed = time.monotonic() - start
        check(result.returncode == 122, f"expected exit status 122 (lost host): {describe(result)}")
        check("lost host hostB (instances 2, 3;" in result.stderr, f"the watch did not name hostB: {describe(result)}")
        check("  lost host: hostB (instances 2, 3;" in result.stderr, f"the report did not name hostB: {describe(result)}")
        named = {host["host"]: host["instances"] for host in report["lost_hosts"]}
        check(named.get("hostB") == [2, 3], f"--report-file's lost_hosts: {report['lost_hosts']}")
        check(report["status"] == 122, f"--report-file's status: {report['status']}")
        nothing_left(token)
        print(f"hostB lost: exit 122 after {elapsed:.1f} s (--host-timeout {HOST_TIMEOUT})")


def off(popdist, testbed):
    with tempfile.TemporaryDirectory() as tmp:
        result, report, token = run_job(popdist, testbed, 0, tmp)
        check(result.returncode == 0, f"--host-timeout 0 must never find a host lost: {describe(result)}")
        check("lost host" not in result.stderr, f"a host was called lost under --host-timeout 0: {describe(result)}")
        check(report["lost_hosts"] == [] and report["status"] == 0, f"--report-file: {report}")
        nothing_left(token)
        print(f"hostB silent for {STOPPED_FOR} s under --host-timeout 0: not lost, exit 0")


def job_processes(token, launcher):
    """The agents and programs of the job marked `token`: the daemons' children (not popdist run
    `launcher` nor mpirun, whose command lines hold the token too)."""
    found = {}
    for pid in processes_with(token):
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if pid != launcher and comm in ("popdist", "sleep"):
            found[pid] = comm
    return found


def gone_within(pids, seconds):
    """The pids of `pids` still there after `seconds` (none: all gone in time)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [pid for pid in pids if os.path.exists(f"/proc/{pid}") and not _zombie(pid)]
        if not left:
            return []
        time.sleep(0.1)
    return left


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


FENCE_HOST_TIMEOUT = 2
GRACE = 1
# The fence's own bound is the host-timeout plus the grace; the margin is for a loaded 2-core
# machine (the agents' 200 ms look, their goodbye to a relay that cannot reach popdist run).
FENCE_MARGIN = 6


def fenced(popdist, testbed):
    with tempfile.TemporaryDirectory() as tmp:
        env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
        env["TMPDIR"] = tmp
        env["OMP_NUM_THREADS"] = "1"
        token = f"{os.getpid()}{int(time.time())}"
        logs = os.path.join(tmp, "logs")
        command = [popdist, "run", "--num-instances", "4", "--host", "hostA,hostB", "--host-timeout",
                   str(FENCE_HOST_TIMEOUT), "--grace-period", str(GRACE), "--log-dir", logs, "--mpi-global-args",
                   f"--mca plm_rsh_agent {fake_hosts_agent(testbed)}", "--", "sh", "-c", f"exec sleep 60.{token}"]
        print("+ " + shlex.join(command), flush=True)
        launcher = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while list(job_processes(token, launcher.pid).values()).count("sleep") < 4:
                check(time.monotonic() < deadline and launcher.poll() is None, "the job's 4 programs did not start")
                time.sleep(0.1)
            time.sleep(1.5)  # every host's relay heard popdist run's beat
            processes = job_processes(token, launcher.pid)
            os.kill(launcher.pid, signal.SIGSTOP)
            stopped = time.monotonic()
            left = gone_within(list(processes), FENCE_HOST_TIMEOUT + GRACE + FENCE_MARGIN)
            elapsed = time.monotonic() - stopped
            check(not left, f"still running {FENCE_HOST_TIMEOUT + GRACE + FENCE_MARGIN} s after popdist run stopped: "
                            f"{[(pid, processes[pid]) for pid in left]}")
            print(f"agents and programs {sorted(processes.items())} gone {elapsed:.1f} s after popdist run stopped "
                  f"(--host-timeout {FENCE_HOST_TIMEOUT}, grace {GRACE})")
        finally:
            os.kill(launcher.pid, signal.SIGCONT)
        out, err = launcher.communicate(timeout=RUN_TIMEOUT)
        said = {}
        for root, _, files in os.walk(logs):
            if "stderr.log" in files:
                with open(os.path.join(root, "stderr.log")) as f:
                    said[os.path.basename(root)] = f.read()
        # An instance whose sibling fenced first may be ended by the job's teardown (mpirun still
        # runs here) before its own fence: every host has one that says why, and none says else.
        why = "nothing heard from popdist run for"
        fenced = [rank for rank, text in said.items() if why in text]
        check(sorted(said) == ["0", "1", "2", "3"] and all(text == "" or why in text for text in said.values()),
              f"every instance must have a stderr.log, empty or saying why: {said}\n--- stderr\n{err}")
        check({"0", "1"} & set(fenced) and {"2", "3"} & set(fenced),
              f"an instance of each host must say in its stderr.log why it was ended: {said}\n--- stderr\n{err}")
        for rank in fenced:
            host = "hostA" if rank in ("0", "1") else "hostB"
            check(said[rank].startswith(f"popdist run: instance {rank} on host {host}: {why}") and
                  f"(--host-timeout {FENCE_HOST_TIMEOUT} s)" in said[rank],
                  f"instance {rank}'s line must name {host} and the timeout: {said[rank]}")
        print(f"fenced by their own agents, said in stderr.log: instances {sorted(fenced)}")
        check(launcher.returncode != 0, f"popdist run must fail after its instances were fenced: exit 0\n{err}")
        nothing_left(token)


def hydra_lost(popdist, testbed):
    """`lost` under hydra's mpiexec (--backend hydra, hydra's ssh launcher with the fake hosts' agent)."""
    if not os.path.exists("/usr/bin/mpiexec.hydra"):
        skip("/usr/bin/mpiexec.hydra is not installed: apt-get install mpich (.ci/install-deps)")
    lost(popdist, testbed, "hydra")


def hydra_shrink(popdist, testbed):
    """Under hydra, --max-restarts 1 --min-instances 2: hostB is lost in the first attempt and the
    second runs without it, 2 instances on hostA, and succeeds."""
    if not os.path.exists("/usr/bin/mpiexec.hydra"):
        skip("/usr/bin/mpiexec.hydra is not installed: apt-get install mpich (.ci/install-deps)")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(mpi_test_environment(os.path.dirname(os.path.abspath(popdist))), TMPDIR=tmp, OMP_NUM_THREADS="1")
        program = (f'if [ "$RANK" -ge 2 ]; then sleep 1.5; kill -STOP $PPID; sleep {STOPPED_FOR}; kill -CONT $PPID; '
                   'exit 0; fi; echo "attempt $POPDIST_RESTART_COUNT: $RANK of $WORLD_SIZE on $(hostname)"; sleep 3')
        command = [popdist, "run", "--backend", "hydra", "--num-instances", "4", "--host", "hostA,hostB",
                   "--host-timeout", str(HOST_TIMEOUT), "--max-restarts", "1", "--min-instances", "2",
                   "--mpi-global-args", f"-launcher ssh -launcher-exec {fake_hosts_agent(testbed)}",
                   "--", "sh", "-c", program]
        print("+ " + shlex.join(command), flush=True)
        result = run(command, env=env, timeout=RUN_TIMEOUT)
    check(result.returncode == 0, f"the second attempt, without hostB, should succeed: {describe(result)}")
    check("left out of every later attempt: hostB" in result.stderr, describe(result))
    second = sorted(line for line in result.stdout.splitlines() if "attempt 1:" in line)
    check(second == ["[1,0]<stdout>:attempt 1: 0 of 2 on hostA", "[1,1]<stdout>:attempt 1: 1 of 2 on hostA"],
          f"the second attempt's instances: {second}\n{describe(result)}")


CHECKS = {"lost": lost, "off": off, "fenced": fenced, "hydra-lost": hydra_lost, "hydra-shrink": hydra_shrink}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
