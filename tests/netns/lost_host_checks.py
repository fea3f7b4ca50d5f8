#!/usr/bin/env python3
"""popdist run when a host is lost (issue 42): --host-timeout, and --max-restarts going on without it.

The launcher runs on h1 with a node-local TMPDIR on every other host (as cross_host_checks.py).
2 instances per host. A host is lost three ways -- its link cut (`ip -n hX link set eth0 down`:
no reset ever arrives), all its processes killed, only Open MPI's daemon (orted) killed -- and
each time popdist run must end within a bound with exit status 122, a report naming the host and
its instances, and nothing of the job left on h1. A host whose program computes silently for
several host-timeouts is not lost. With --max-restarts 1 --min-instances the job goes on without
the lost host; below --min-instances it is refused. The other way (issue 48): a host cut off for
good ends its own instances -- its agents and programs are gone, by pid, within --host-timeout
plus the grace period -- and a host whose programs are stopped (SIGSTOP) for several
host-timeouts still hears popdist run and is neither fenced nor lost. Used by CTest as

    lost_host_checks.py <check> <popdist> <testbed> <h1,h2[,h3]>
        check: link-cut, killed, orted-killed, busy, stopped, cut-off, shrink, refused

The namespaces are restored (link up, the lost host's leftovers killed) after every check.
Exit status: 0 pass, 1 a check failed, 77 skipped (the message names what is missing).
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_checks  # noqa: E402 - the testbed's probes
from netns_checks import check, fail  # noqa: E402
from private_tmp_job import PrivateTmpJob  # noqa: E402 - the job every check starts

HOST_TIMEOUT = 3
# From the loss to popdist run's exit: the host-timeout, the grace (1 s) + 2 s before SIGKILL,
# and slack for a loaded 2-core machine.
END_BOUND = HOST_TIMEOUT + 3 + 8
LOST_STATUS = 122
GRACE = 1  # popdist run's default --grace-period
# From the cut to the cut-off host's instances' end: the host-timeout and the grace, and slack for
# a loaded 2-core machine (the agents' 200 ms look, their goodbye to a relay cut off too).
FENCE_BOUND = HOST_TIMEOUT + GRACE + 5

# argv[1]: "spin" waits to be torn down; "busy" computes without a word for argv[2] seconds and
# ends. After a restart every instance prints its counts and ends.
PROGRAM = r"""
import os, sys, time
mode, rank = sys.argv[1], int(os.environ["RANK"])
if os.environ.get("POPDIST_RESTART_COUNT", "0") != "0":
    print("attempt", os.environ["POPDIST_RESTART_COUNT"], "rank", rank, "world", os.environ["WORLD_SIZE"],
          "replicas", os.environ["POPDIST_NUM_TOTAL_REPLICAS"], "host", os.uname().nodename, flush=True)
    sys.exit(0)
print("ready", rank, flush=True)
if mode == "stopped":
    import subprocess
    me = os.getpid()
    subprocess.Popen(["sh", "-c", f"kill -STOP {me}; sleep {sys.argv[2]}; kill -CONT {me}"])
    time.sleep(0.5)
    sys.exit(0)
if mode == "busy":
    end = time.monotonic() + float(sys.argv[2])
    x = 0
    while time.monotonic() < end:
        x += sum(i * i for i in range(10000))
    sys.exit(0)
while True:
    time.sleep(0.05)
"""


def start_job(popdist, testbed, hosts, args, extra=()):
    """PROGRAM with `args` on `hosts`, popdist run given --host-timeout and `extra` (private_tmp_job.py)."""
    return PrivateTmpJob(popdist, testbed, hosts, PROGRAM, args=args,
                         options=("--host-timeout", str(HOST_TIMEOUT), *extra), prefix="popdist-lost-")


def wait_ready(job):
    job.wait_ready()
    time.sleep(1.5)  # every host's relay has connected and beaten


def pids_on(host, name=None):
    pids = subprocess.run(["ip", "netns", "pids", host], capture_output=True, text=True).stdout.split()
    if name is None:
        return pids
    named = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == name:
                    named.append(pid)
        except OSError:
            pass
    return named


def kill(pids):
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def restore(host):
    subprocess.run(["ip", "-n", host, "link", "set", "eth0", "up"], check=False)
    kill(pids_on(host))


def nothing_left_on(host, script):
    deadline = time.monotonic() + 10  # the agents end with mpirun (parent death); give them a moment
    while time.monotonic() < deadline:
        left = [pid for pid in pids_on(host) if script in _cmdline(pid) or "orted" in _cmdline(pid)]
        if not left:
            return
        time.sleep(0.2)
    fail(f"left running on {host}: {[_cmdline(pid) for pid in left]}")


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read().replace("\0", " ")
    except OSError:
        return ""


def lose(host, how):
    if how == "link-cut":
        subprocess.run(["ip", "-n", host, "link", "set", "eth0", "down"], check=True)
    elif how == "killed":
        kill(pids_on(host))
    else:
        orted = pids_on(host, "orted")
        check(orted, f"no orted in {host}'s namespace")
        kill(orted)


def lost_host_checks(job, status, out, lost, elapsed):
    index = job.hosts.index(lost)
    instances = f"instances {2 * index}, {2 * index + 1}"
    check(status == LOST_STATUS, f"exit status {LOST_STATUS} (lost host) expected, got {status}")
    check(elapsed <= END_BOUND, f"popdist run took {elapsed:.1f} s after the loss, more than {END_BOUND} s")
    check(re.search(rf"lost host: {lost} \({instances}; last heard [\d.]+ s ago\)", out),
          f"the report does not name {lost} and its {instances}:\n{out}")
    check("the job failed (lost host, exit status 122" in out, f"the status line does not say lost host:\n{out}")
    report = job.report()
    check([h["host"] for h in report["lost_hosts"]] == [lost], f"--report-file's lost_hosts: {report['lost_hosts']}")


def lost(how):
    def run(popdist, testbed, hosts):
        job = start_job(popdist, testbed, hosts, ["spin"])
        try:
            wait_ready(job)
            print(f"+ losing {hosts[-1]}: {how}", flush=True)
            start = time.monotonic()
            lose(hosts[-1], how)
            status, out = job.finish(lambda: restore(hosts[-1]))
            elapsed = time.monotonic() - start
            print(f"from the loss to popdist run's end: {elapsed:.2f} s")
            lost_host_checks(job, status, out, hosts[-1], elapsed)
            nothing_left_on(hosts[0], job.script)
        finally:
            restore(hosts[-1])
    return run


def busy(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, ["busy", str(3 * HOST_TIMEOUT)])
    status, out = job.finish()
    check(status == 0, f"a busy job must succeed, got status {status}")
    check("lost host" not in out, f"a busy host was declared lost:\n{out}")


def shrink(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, ["spin"], extra=("--max-restarts", "1", "--min-instances", "4"))
    try:
        wait_ready(job)
        lose(hosts[-1], "link-cut")
        status, out = job.finish(lambda: restore(hosts[-1]))
    finally:
        restore(hosts[-1])
    check(status == 0, f"attempt 2 on the hosts left must succeed: status {status}")
    check(f"lost host: {hosts[-1]} (instances 4, 5;" in out, f"attempt 1's report does not name {hosts[-1]}:\n{out}")
    check(f"left out of every later attempt: {hosts[-1]}" in out, f"the left-out host is not said:\n{out}")
    said = re.findall(r"attempt 1 rank (\d+) world (\d+) replicas (\d+) host (\S+)", out)
    check(sorted(int(r) for r, *_ in said) == [0, 1, 2, 3], f"attempt 2 must run ranks 0-3:\n{out}")
    check(all(w == "4" and r == "4" for _, w, r, _ in said), f"attempt 2's counts are not 4: {said}")
    check({h for *_, h in said} == set(hosts[:-1]), f"attempt 2 ran on {sorted({h for *_, h in said})}")


def refused(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, ["spin"], extra=("--max-restarts", "1", "--min-instances", "6"))
    try:
        wait_ready(job)
        start = time.monotonic()
        lose(hosts[-1], "link-cut")
        status, out = job.finish(lambda: restore(hosts[-1]))
        elapsed = time.monotonic() - start
    finally:
        restore(hosts[-1])
    lost_host_checks(job, status, out, hosts[-1], elapsed)
    check("no restart: lost host(s) h3: 4 instance(s) on the 2 host(s) left are fewer than --min-instances 6" in out,
          f"the refusal is not said:\n{out}")
    check("restarting" not in out, f"a restart below --min-instances:\n{out}")


def stopped(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, ["stopped", str(3 * HOST_TIMEOUT)])
    status, out = job.finish()
    check(status == 0, f"a job whose programs were stopped for a while must succeed, got status {status}")
    check("lost host" not in out, f"a host whose programs were stopped was declared lost:\n{out}")
    check("nothing heard from popdist run" not in out, f"a host that hears popdist run fenced itself:\n{out}")


def instances_on(host, script):
    """The pids of the job's agents and programs on `host` (Open MPI's daemon's children)."""
    return [pid for pid in pids_on(host) if script in _cmdline(pid) and "orted" not in _cmdline(pid)]


def still_there(pids):
    return [pid for pid in pids if os.path.exists(f"/proc/{pid}")]


def cut_off(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, ["spin"])
    cut = hosts[-1]
    seen = {}
    try:
        wait_ready(job)
        instances = instances_on(cut, job.script)
        check(len(instances) >= 4, f"expected 2 agents and 2 programs on {cut}: {[_cmdline(p) for p in instances]}")
        start = time.monotonic()
        lose(cut, "link-cut")

        def watch():  # from the cut on, while popdist run finds the host lost and ends
            while still_there(instances) and time.monotonic() < start + FENCE_BOUND:
                time.sleep(0.05)
            seen["left"] = [(pid, _cmdline(pid)) for pid in still_there(instances)]
            seen["after"] = time.monotonic() - start

        watcher = threading.Thread(target=watch)
        watcher.start()

        def instances_ended_then_restore():  # the host stays cut off until its instances had their time
            watcher.join()
            restore(cut)

        status, out = job.finish(instances_ended_then_restore)
    finally:
        restore(cut)
    print(f"{cut}'s instances {'still there' if seen['left'] else 'gone'} {seen['after']:.1f} s after the cut "
          f"(--host-timeout {HOST_TIMEOUT}, grace {GRACE}, bound {FENCE_BOUND} s)")
    check(not seen["left"], f"{cut}, cut off for good, kept instances running {FENCE_BOUND} s after the cut: {seen['left']}")
    check(status == LOST_STATUS, f"exit status {LOST_STATUS} (lost host) expected, got {status}")


CHECKS = {"stopped": stopped, "cut-off": cut_off, "link-cut": lost("link-cut"), "killed": lost("killed"), "orted-killed": lost("orted-killed"),
          "busy": busy, "shrink": shrink, "refused": refused}


if __name__ == "__main__":
    sys.exit(netns_checks.run_host_check(CHECKS, sys.argv))
