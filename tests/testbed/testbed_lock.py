#!/usr/bin/env python3
"""One test run at a time per machine on the testbeds that exist once per machine (the namespaces
h1..hN and their bridge, the Slurm cluster with its fixed ports): CTest's RESOURCE_LOCK holds only
within one ctest run, so two build trees testing at once would otherwise tear down each other's
testbed. Each testbed's CTest fixture takes the machine-wide lock in its setup (flock on
/run/lock/popdist-testbeds.lock) and gives it back in its cleanup; the run's tests run between.

    testbed_lock.py take <testbed> [--wait S]  in the setup, before anything is torn down or made:
                                               waits (at most S s, default $POPDIST_TESTBED_WAIT or
                                               3600) while another run holds it, then leaves a holder
    testbed_lock.py holds <testbed>            exit 0 when this run holds it: the cleanup tears
                                               down only then, never another run's testbed
    testbed_lock.py release <testbed>          in the cleanup, after the teardown

One lock for both testbeds, not one each: a run waiting in one testbed's setup keeps CTest slots
(and the run's other testbed's tests need two processors), so two runs each holding one testbed
and waiting for the other's would wait for each other until the wait ran out. The run that holds
the lock takes it again for its other testbed at once, and gives it back with the last of them.

A run is the process that started the fixture's scripts (CTest; given as --run <pid>, default the
parent of this script). flock belongs to an open file, not to a process, and the setup ends before
the tests start: so a small holder process keeps the file open, until the last `release` or until
the run's process is gone (a run killed before its cleanup does not keep the testbeds from every
later run). The lock file names the run that holds it, and the testbeds it took.
Exit status: 0 done, 1 not taken within the wait (or not held, for `holds`), 2 usage.
"""
import argparse
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time

LOCK_DIRECTORY = "/run/lock" if os.path.isdir("/run/lock") else "/tmp"
LOCK = os.path.join(LOCK_DIRECTORY, "popdist-testbeds.lock")
# Guards the record in LOCK while a run's fixtures update it (CTest may start two setups at once).
RECORD_LOCK = os.path.join(LOCK_DIRECTORY, "popdist-testbeds.record.lock")
DEFAULT_WAIT_SECONDS = 3600
HOLDER_POLL_SECONDS = 1.0


def started_at(pid):
    """The process's start time (clock ticks since boot), so that a reused pid is not taken for it;
    None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def read_record():
    """What the lock file says of the run that holds (or last held) the lock; {} when nothing."""
    try:
        with open(LOCK) as f:
            return json.loads(f.read() or "{}")
    except (OSError, ValueError):
        return {}


def write_record(record):
    with open(LOCK, "r+") as f:
        f.truncate(0)
        f.write(json.dumps(record))


@contextlib.contextmanager
def record_lock():
    fd = os.open(RECORD_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def held_by(run_pid):
    record = read_record()
    return (record.get("run_pid") == run_pid and record.get("run_started") == started_at(run_pid)
            and started_at(record.get("holder_pid", 0)) is not None)


def try_lock(fd):
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def start_holder(fd, run_pid, testbed):
    """Leaves a process that keeps `fd` (and so the lock) while the run lives; records it."""
    run_started = started_at(run_pid)
    holder = subprocess.Popen([sys.executable, os.path.abspath(__file__), "_hold", str(fd), str(run_pid),
                               str(run_started)],
                              pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    write_record({"run_pid": run_pid, "run_started": run_started, "what": os.getcwd(), "holder_pid": holder.pid,
                  "testbeds": [testbed]})


def take_once(fd, testbed, run_pid):
    """Under the record's lock: True when this run has the lock now (again, or for the first time)."""
    with record_lock():
        if held_by(run_pid):
            record = read_record()
            record["testbeds"] = sorted(set(record.get("testbeds", [])) | {testbed})
            write_record(record)
            return True
        if not try_lock(fd):
            return False
        start_holder(fd, run_pid, testbed)
        return True


def take(testbed, run_pid, wait_seconds):
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait_seconds
    said = False
    while not take_once(fd, testbed, run_pid):
        if not said:
            held = read_record()
            print(f"the testbeds are in use by another test run ({held.get('what', '?')}, its process "
                  f"{held.get('run_pid', '?')}): waiting up to {wait_seconds:.0f} s for it to finish", flush=True)
            said = True
        if time.monotonic() >= deadline:
            print(f"the testbeds are still in use after {wait_seconds:.0f} s ({LOCK})")
            return 1
        time.sleep(1)
    print(f"the {testbed} testbed is this run's ({LOCK}, the run of process {run_pid})", flush=True)
    return 0


def hold(fd, run_pid, run_started):
    """The holder: keeps `fd` (and so the lock) open while the run lives, or until SIGTERM. Its
    output goes nowhere: CTest waits for every process that holds a test's output."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while started_at(run_pid) == run_started:
        time.sleep(HOLDER_POLL_SECONDS)
    return 0  # the lock goes with this process's last descriptor of the file


def release(testbed, run_pid):
    with record_lock():
        if not held_by(run_pid):
            print(f"the testbeds are not this run's: nothing to give back for {testbed}")
            return 0
        record = read_record()
        record["testbeds"] = [t for t in record.get("testbeds", []) if t != testbed]
        write_record(record)
        if record["testbeds"]:
            print(f"gave the {testbed} testbed back; this run keeps the lock for {', '.join(record['testbeds'])}")
            return 0
        holder = record["holder_pid"]
        os.kill(holder, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while started_at(holder) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
    print(f"gave the {testbed} testbed back, and the lock")
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "_hold":
        return hold(int(argv[2]), int(argv[3]), int(argv[4]))
    parser = argparse.ArgumentParser(description="one test run at a time per machine on the testbeds")
    parser.add_argument("action", choices=("take", "holds", "release"))
    parser.add_argument("testbed", help="the testbed: netns, slurm")
    parser.add_argument("--run", type=int, default=os.getppid(), help="the run's process (default: the caller)")
    parser.add_argument("--wait", type=float, default=float(os.environ.get("POPDIST_TESTBED_WAIT",
                                                                           DEFAULT_WAIT_SECONDS)))
    args = parser.parse_args(argv[1:])
    if args.action == "take":
        return take(args.testbed, args.run, args.wait)
    if args.action == "holds":
        return 0 if held_by(args.run) else 1
    return release(args.testbed, args.run)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
