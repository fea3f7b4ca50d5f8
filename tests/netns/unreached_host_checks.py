#!/usr/bin/env python3
"""popdist run when a host cannot reach back (issue 47 item 4): the last host's link is down at
the start (`ip -n hX link set eth0 down`), so the launcher's remote shell (the testbed's
`ip netns exec` agent) starts its daemon -- Open MPI's orted, hydra's proxy -- but nothing there
can connect back. Measured here: Open MPI 4's mpirun then ends by itself at once ("ORTE was unable
to reliably start one or more daemons", naming no host); hydra's mpiexec says its proxy could not
connect and then waits forever. Either way popdist run must end, within a bound, with a report
that names the host and why ("started ..., but could not connect back to popdist run at
<address:port> ...: ... Network is unreachable"), the same in --report-file, and leave nothing
of the job behind. Used by CTest as

    unreached_host_checks.py link-down|only-host-down|dropped <popdist> <testbed> <h1,h2[,h3]> [--backend openmpi|hydra]

link-down runs the job on every host; only-host-down on the last host only, started from the
first (no host ever speaks: hydra's mpiexec then hangs in its teardown, and popdist run ends it);
dropped runs it on every host with the last host's packets to the first dropped (a firewall that
drops: Open MPI's mpirun then waits for that host's daemon, and no host speaks until popdist run's
bound at the start, 30 s).

The link is restored (and the host's leftovers killed) after the check.
Exit status: 0 pass, 1 a check failed, 77 skipped (the message names what is missing).
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_checks  # noqa: E402 - the testbed's probes
from lost_host_checks import kill, pids_on  # noqa: E402
from netns_checks import check  # noqa: E402
from private_tmp_job import PrivateTmpJob  # noqa: E402 - the job every check starts

# Never a hang: the startup bound (30 s when no host spoke; 5 s after another did), the probes'
# deadline (5 s), the grace before SIGKILL (1 + 2 s), and slack for a loaded 2-core machine.
END_BOUND = 60

PROGRAM = r"""
import time
print("ready", flush=True)
time.sleep(1)
"""


# What the probe on the cut-off host says: a link down is an error at once; packets dropped on
# the way (a firewall that drops, no answer ever) a connect that times out.
PROBE_ERROR = {"link-down": "Network is unreachable", "dropped": "Connection timed out"}


def cut(host, how, launcher_address):
    if how == "link-down":
        subprocess.run(["ip", "-n", host, "link", "set", "eth0", "down"], check=True)
    else:  # the launcher's host at a MAC nobody has: every packet to it vanishes on the bridge
        subprocess.run(["ip", "-n", host, "neigh", "replace", launcher_address, "lladdr", "02:00:00:00:00:99",
                        "dev", "eth0", "nud", "permanent"], check=True)


def restore(host, launcher_address):
    subprocess.run(["ip", "-n", host, "link", "set", "eth0", "up"], check=False)
    subprocess.run(["ip", "-n", host, "neigh", "del", launcher_address, "dev", "eth0"], check=False,
                   capture_output=True)
    kill(pids_on(host))  # Open MPI's orted there lingers until its own connect times out (minutes)


def link_down(popdist, testbed, hosts):
    """The job on every host, the last one's link down: the others speak, it never does."""
    run_cut_off(popdist, testbed, hosts, hosts, "link-down")


def only_host_down(popdist, testbed, hosts):
    """The job on the last host only, started from the first, whose link is down: no host ever speaks."""
    run_cut_off(popdist, testbed, hosts, hosts[-1:], "link-down")


def dropped(popdist, testbed, hosts):
    """The job on every host, the last one's packets to the launcher's host dropped: under Open MPI
    no host speaks (mpirun waits for the daemon) until popdist run's bound at the start."""
    run_cut_off(popdist, testbed, hosts, hosts, "dropped")


def run_cut_off(popdist, testbed, hosts, job_hosts, how):
    down = hosts[-1]
    launcher_address = f"10.200.0.{hosts[0].lstrip('h')}"  # netns_setup.sh: hN is 10.200.0.N
    cut(down, how, launcher_address)
    try:
        start = time.monotonic()
        job = PrivateTmpJob(popdist, testbed, job_hosts, PROGRAM, prefix="popdist-unreached-", launch_host=hosts[0])
        status, out = job.finish(lambda: restore(down, launcher_address))
        elapsed = time.monotonic() - start
    finally:
        restore(down, launcher_address)
    print(f"from the start to popdist run's end, {down}'s link down, under {job.backend}: {elapsed:.2f} s")
    check(status != 0, f"a failure status expected, got {status}")
    check(elapsed <= END_BOUND, f"popdist run took {elapsed:.1f} s, more than {END_BOUND} s")
    block = out[out.find("popdist run: the job failed"):]
    check("popdist run: the job failed (unreachable host" in block, f"the status line does not say so:\n{out}")
    named = re.search(rf"  unreachable host: {down}: started by {re.escape(job.rsh)}, but could not connect back "
                      rf"to popdist run at [\d.]+:\d+ within [\d.]+ s \(.*\): popdist _reach on {down}: could not "
                      rf"connect to [\d.]+:\d+ within \d+ ms: connect: {PROBE_ERROR[how]}", block)
    check(named, f"the report does not name {down} and why:\n{block}")
    for host in job_hosts[:-1]:
        check(f"unreachable host: {host}:" not in block, f"{host}, reachable, is named unreachable:\n{block}")
    # h1, where popdist run runs, is this machine: never probed (no remote shell starts its instances)
    check("reachable: h1" not in block, f"h1, popdist run's own host, was probed:\n{block}")
    check(named.group(0) in job.report()["text"], f"--report-file's text differs: {job.report()['text']}")


CHECKS = {"link-down": link_down, "only-host-down": only_host_down, "dropped": dropped}


if __name__ == "__main__":
    sys.exit(netns_checks.run_host_check(CHECKS, sys.argv))
