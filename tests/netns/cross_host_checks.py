#!/usr/bin/env python3
"""popdist run across network-namespace hosts whose temporary directory is node-local (issue 41).

The launcher runs on h1 with TMPDIR a directory of its own; the testbed's netns_private_rsh.sh
mounts a fresh tmpfs there on every other host, so nothing the agents write reaches popdist run
through files: the failure report, --report-file, the stall watch and `popdist stacks` must come
over the job's channel. 4 instances on 2 hosts, 6 on 3; the failing instance is the last, on the last host. Used by CTest as

    cross_host_checks.py <check> <popdist> <testbed> <hosts>   check: exception, sigkill, stall,
                                                              stacks, restart, stranger

Exit status: 0 pass, 1 a check failed, 77 skipped (the message names what is missing).
"""
import os
import re
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_checks  # noqa: E402 - the testbed's probes
from netns_checks import check  # noqa: E402
from private_tmp_job import PrivateTmpJob  # noqa: E402 - the job every check starts

# The last instance misbehaves as asked (argv[1]); every other one waits quietly to be torn down.
# After a restart (attempt 2) every instance succeeds.
PROGRAM = r"""
import os, signal, sys, time
mode, rank = sys.argv[1], int(os.environ["RANK"])
last = int(os.environ["WORLD_SIZE"]) - 1
def spin_forever():
    while True:
        time.sleep(0.05)
print("ready", rank, flush=True)
if os.environ.get("POPDIST_RESTART_COUNT", "0") != "0":
    sys.exit(0)
if rank == last and mode == "exception":
    time.sleep(1)
    raise RuntimeError("the last instance broke")
if rank == last and mode == "sigkill":
    time.sleep(1)
    os.kill(os.getpid(), signal.SIGKILL)
spin_forever()
"""


def start_job(popdist, testbed, hosts, mode, extra=()):
    """PROGRAM in `mode` on `hosts`, popdist run given `extra` (private_tmp_job.py)."""
    return PrivateTmpJob(popdist, testbed, hosts, PROGRAM, args=[mode], options=extra)


def first_failure_checks(out, job, host, status_words, lines):
    block = out[out.find("popdist run: the job failed"):]
    check(f"first failure: instance {job.last} on {host}: {status_words}" in block,
          f"instance {job.last} on {host} not first:\n{block}")
    for line in lines:
        check(line in block, f"{line!r} missing from the report:\n{block}")
    report = job.report()
    first = report["failures"][0] if report["failures"] else {}
    check(first.get("instance") == job.last and first.get("host") == host,
          f"--report-file names another first failure: {first}")
    check(f"first failure: instance {job.last} on {host}: {status_words}" in report["text"],
          f"--report-file's text differs: {report['text']}")
    for line in lines:
        check(line in first.get("error_lines", ""), f"{line!r} missing from --report-file: {first}")


def exception(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, "exception")
    status, out = job.finish()
    check(status == 1, f"exit status 1 expected, got {status}")
    first_failure_checks(out, job, hosts[-1], "exit code 1", ["RuntimeError: the last instance broke"])


def sigkill(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, "sigkill")
    status, out = job.finish()
    check(status != 0, f"a failure status expected, got {status}")
    first_failure_checks(out, job, hosts[-1], "SIGKILL (signal 9", [])


def stall(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, "stall", extra=("--stall-timeout", "6"))
    status, out = job.finish()
    check(status == 125, f"--stall-timeout's status 125 expected, got {status}")
    for index in range(job.instances):
        check(re.search(rf"  instance {index}: {re.escape(job.script)}:\d+ in spin_forever", out),
              f"instance {index}'s frame is not named:\n{out}")
    check(f"on {hosts[-1]}" in out, f"the remote host is not named:\n{out}")


def stacks(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, "stacks")
    job.wait_ready()
    time.sleep(1)
    result = subprocess.run([*job.on_h1, popdist, "stacks", "--wait", "3"], env=job.env, capture_output=True,
                            text=True, timeout=60)
    print(result.stdout, result.stderr)
    job.stop()
    check(result.returncode == 0, f"popdist stacks failed: {result.stderr}")
    for index in range(job.instances):
        check(re.search(rf"  instance {index}: {re.escape(job.script)}:\d+ in spin_forever", result.stdout),
              f"instance {index} not located:\n{result.stdout}")


def restart(popdist, testbed, hosts):
    job = start_job(popdist, testbed, hosts, "exception", extra=("--max-restarts", "1"))
    status, out = job.finish()
    check(status == 0, f"attempt 2 must succeed: status {status}")
    check("restarting the whole job" in out, f"no restart after the remote failure:\n{out}")
    check(f"first failure: instance {job.last} on {hosts[-1]}" in out, f"the first attempt's report is wrong:\n{out}")


def frame(kind, payload):
    return struct.pack(">IB", len(payload) + 1, kind) + payload


def text(value):
    data = value.encode()
    return struct.pack(">I", len(data)) + data


def stranger(popdist, testbed, hosts):
    """No secret, a wrong one, garbage, an oversized frame and a flood, while the last instance raises."""
    job = start_job(popdist, testbed, hosts, "exception")
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    match = re.search(r"POPDIST_CHANNEL_ADDRESS=([\d.]+):(\d+)", ps)
    check(match, "no POPDIST_CHANNEL_ADDRESS on mpirun's command line")
    address, port = match.group(1), int(match.group(2))
    attacks = [
        frame(1, text("") + text("h9") + bytes([1]) + struct.pack(">I", 0)),        # no secret
        frame(1, text("0" * 64) + text("h9") + bytes([1]) + struct.pack(">I", 0)),  # a wrong one
        b"GET / HTTP/1.1\r\n\r\n",                                                  # garbage
        struct.pack(">I", 1 << 30) + b"x" * 1000,                                   # oversized
    ]
    client = ("import socket, sys, time\n"
              f"attacks = {attacks!r}\n"
              "for data in attacks:\n"
              f"    s = socket.create_connection(({address!r}, {port}), timeout=5)\n"
              "    s.sendall(data); time.sleep(0.2); s.close()\n"
              f"flood = [socket.create_connection(({address!r}, {port}), timeout=5) for _ in range(300)]\n"
              "time.sleep(1)\n")
    attack = subprocess.run([*job.on_h1, sys.executable, "-c", client], capture_output=True, text=True, timeout=60)
    print(attack.stdout, attack.stderr)
    status, out = job.finish()
    check(status == 1, f"the job's own status 1 expected, got {status}")
    first_failure_checks(out, job, hosts[-1], "exit code 1", ["RuntimeError: the last instance broke"])
    check("channel:" in out, f"the refusals were not reported:\n{out}")


CHECKS = {"exception": exception, "sigkill": sigkill, "stall": stall, "stacks": stacks, "restart": restart,
          "stranger": stranger}


if __name__ == "__main__":
    sys.exit(netns_checks.run_host_check(CHECKS, sys.argv))
