#!/usr/bin/env python3
"""One test run at a time per machine on a testbed that exists once per machine (the namespaces
h1..hN and their bridge, the Slurm cluster with its fixed ports): CTest's RESOURCE_LOCK holds
only within one ctest run, so two build trees testing at once would otherwise tear down each
other's testbed. The CTest fixture's setup takes a machine-wide lock (flock on
/run/lock/popdist-testbed-<name>.lock) and its cleanup gives it back; the run's tests run between.

    testbed_lock.py take <name> [--wait S]   in the setup, before anything is torn down or made:
                                             waits (at most S s, default $POPDIST_TESTBED_WAIT or
                                             1800) while another run holds it, then leaves a holder
    testbed_lock.py holds <name>             exit 0 when this run holds it: the cleanup tears
                                             down only then, never another run's testbed
    testbed_lock.py release <name>           in the cleanup, after the teardown

A run is the process that started the fixture's scripts (CTest; the parent of this script's
caller, given as --run <pid>, default the parent of this script). flock belongs to an open file,
not to a process, and the setup ends before the tests start: so a small holder process keeps the
file open, until `release` or until the run's process is gone (a run killed before its cleanup
does not keep the testbed from every later run). The lock file names the run that holds it.
Exit status: 0 done, 1 not taken within the wait (or not held, for `holds`), 2 usage.
"""
import argparse
import fcntl
import json
import os
import signal
import subprocess
import sys
import time

LOCK_DIRECTORY = "/run/lock" if os.path.isdir("/run/lock") else "/tmp"
DEFAULT_WAIT_SECONDS = 1800
HOLDER_POLL_SECONDS = 1.0


def lock_path(name):
    return os.path.join(LOCK_DIRECTORY, f"popdist-testbed-{name}.lock")


def started_at(pid):
    """The process's start time (clock ticks since boot), so that a reused pid is not taken for it;
    None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def run_identity(pid):
    return {"run_pid": pid, "run_started": started_at(pid)}


def holder_record(name):
    """What the lock file says of the run that holds (or last held) it; {} when nothing."""
    try:
        with open(lock_path(name)) as f:
            return json.loads(f.read() or "{}")
    except (OSError, ValueError):
        return {}


def try_lock(fd):
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def take(name, run_pid, wait_seconds):
    if holds(name, run_pid):
        print(f"the {name} testbed is this run's already")
        return 0
    fd = os.open(lock_path(name), os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait_seconds
    if not try_lock(fd):
        held_by = holder_record(name)
        print(f"the {name} testbed is in use by another test run ({held_by.get('what', '?')}, its process "
              f"{held_by.get('run_pid', '?')}): waiting up to {wait_seconds} s for it to finish", flush=True)
        while not try_lock(fd):
            if time.monotonic() >= deadline:
                print(f"the {name} testbed is still in use after {wait_seconds} s ({lock_path(name)})")
                return 1
            time.sleep(1)
    record = dict(run_identity(run_pid), what=os.getcwd())
    holder = subprocess.Popen([sys.executable, os.path.abspath(__file__), "_hold", str(fd), str(run_pid),
                               str(record["run_started"])],
                              pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    record["holder_pid"] = holder.pid
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(record).encode(), 0)
    print(f"took the {name} testbed ({lock_path(name)}) for the run of process {run_pid}", flush=True)
    return 0


def hold(fd, run_pid, run_started):
    """The holder: keeps `fd` (and so the lock) open while the run lives, or until SIGTERM. Its
    output goes nowhere: CTest waits for every process that holds a test's output."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while started_at(run_pid) == run_started:
        time.sleep(HOLDER_POLL_SECONDS)
    return 0  # the lock goes with this process's last descriptor of the file


def holds(name, run_pid):
    record = holder_record(name)
    return (record.get("run_pid") == run_pid and record.get("run_started") == started_at(run_pid)
            and started_at(record.get("holder_pid", 0)) is not None)


def release(name, run_pid):
    if not holds(name, run_pid):
        print(f"the {name} testbed is not held by this run: nothing to release")
        return 0
    holder = holder_record(name)["holder_pid"]
    os.kill(holder, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while started_at(holder) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"gave the {name} testbed back")
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "_hold":
        return hold(int(argv[2]), int(argv[3]), int(argv[4]))
    parser = argparse.ArgumentParser(description="one test run at a time per machine on a testbed")
    parser.add_argument("action", choices=("take", "holds", "release"))
    parser.add_argument("name", help="the testbed: netns, slurm")
    parser.add_argument("--run", type=int, default=os.getppid(), help="the run's process (default: the caller)")
    parser.add_argument("--wait", type=float, default=float(os.environ.get("POPDIST_TESTBED_WAIT",
                                                                           DEFAULT_WAIT_SECONDS)))
    args = parser.parse_args(argv[1:])
    if args.action == "take":
        return take(args.name, args.run, args.wait)
    if args.action == "holds":
        return 0 if holds(args.name, args.run) else 1
    return release(args.name, args.run)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
