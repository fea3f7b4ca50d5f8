#!/usr/bin/env python3
"""A lost host, side by side (issue 42), on the network-namespace testbed (tests/testbed):

1. From a host's loss (h2's link cut: no reset ever arrives) to the launcher on h1 acting on it:
   `popdist run --host-timeout S` (its report and exit) vs torchrun --nnodes 1:2 --rdzv-backend
   c10d (one torchrun per host, a gloo all_reduce loop), capped at `--cap` seconds.
2. A CPU training step (torch_step.py, 2 instances on this machine) under popdist run with the
   agents' beat at 1 s vs with the beat off (POPDIST_CHANNEL_BEAT_MS=0), alternating runs.

    bench_lost_host.py <popdist> <testbed> [--cap 90] [--runs 3]

Run by hand with the namespaces up (netns_setup.sh up 2); prints the rows for README.md."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "netns"))
import lost_host_checks as lost  # noqa: E402 - Job, restore, the testbed's arguments
import netns_checks  # noqa: E402

TORCH_PROGRAM = r"""
import os, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
print("ready", dist.get_rank(), flush=True)
t = torch.ones(1000)
while True:
    dist.all_reduce(t)
    time.sleep(0.05)
"""


def popdist_loss(popdist, testbed, host_timeout):
    lost.HOST_TIMEOUT = host_timeout
    job = lost.Job(popdist, testbed, ["h1", "h2"], ["spin"])
    try:
        job.wait_ready()
        start = time.monotonic()
        lost.lose("h2", "link-cut")
        report_at = []

        def read():  # the lost host's processes hold the pipe open: read aside, wait for the exit
            for line in job.process.stdout:
                if not report_at and "lost host:" in line:
                    report_at.append(time.monotonic() - start)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        job.process.wait()
        end = time.monotonic() - start
        lost.restore("h2")
        reader.join(10)
        return (report_at or [float("nan")])[0], end, job.process.returncode
    finally:
        lost.restore("h2")


def torchrun_loss(testbed, cap):
    tmp = tempfile.mkdtemp(prefix="popdist-bench-lost-")
    script = os.path.join(tmp, "loop.py")
    with open(script, "w") as f:
        f.write(TORCH_PROGRAM)
    on = lambda h: [os.path.join(testbed, "on_host.sh"), h]  # noqa: E731
    command = ["torchrun", "--nnodes", "1:2", "--nproc-per-node", "1", "--rdzv-backend", "c10d",
               "--rdzv-endpoint", "10.200.0.1:29400", "--rdzv-id", "bench-lost", "--max-restarts", "1", script]
    env = dict(os.environ, GLOO_SOCKET_IFNAME="eth0", PYTHONUNBUFFERED="1")
    h1 = subprocess.Popen(on("h1") + command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          start_new_session=True)
    h2 = subprocess.Popen(on("h2") + command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                          start_new_session=True)
    try:
        output = ""
        while "ready 0" not in output:
            line = h1.stdout.readline()
            if not line:
                return None, output
            output += line
        time.sleep(3)
        start = time.monotonic()
        subprocess.run(["ip", "-n", "h2", "link", "set", "eth0", "down"], check=True)
        acted = []

        def read():  # h2's torchrun holds nothing of h1's pipe, but a read blocks: read aside
            for line in h1.stdout:
                lines.append(line)
                if not acted and re.search(r"(?i)restart|failed|timed out|error", line):
                    acted.append(time.monotonic() - start)

        lines = []
        threading.Thread(target=read, daemon=True).start()
        while time.monotonic() - start < cap and not acted and h1.poll() is None:
            time.sleep(0.1)
        if h1.poll() is not None and not acted:
            acted.append(time.monotonic() - start)
        output += "".join(lines)
        acted = acted[0] if acted else None
        return acted, output
    finally:
        for process in (h1, h2):
            try:
                os.killpg(process.pid, 9)
            except ProcessLookupError:
                pass
        lost.restore("h2")
        lost.kill(lost.pids_on("h1"))


def step_time(popdist, beat_ms):
    env = dict(os.environ, POPDIST_CHANNEL_BEAT_MS=str(beat_ms), OMP_NUM_THREADS="1")
    # Without the beat --host-timeout would (rightly) find this machine lost: it is off then.
    timeout = "10" if beat_ms else "0"
    result = subprocess.run([popdist, "run", "--num-instances", "2", "--host-timeout", timeout, "--", sys.executable,
                             os.path.join(HERE, "torch_step.py"), "30", "5"], capture_output=True, text=True, env=env)
    line = next((line for line in result.stdout.splitlines() if '{"step_s"' in line), None)
    if line is None:
        raise RuntimeError(f"torch_step.py printed no result:\n{result.stdout}\n{result.stderr}")
    return json.loads(line[line.index("{"):])  # after mpirun's [1,0]<stdout>: tag


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("popdist")
    parser.add_argument("testbed")
    parser.add_argument("--cap", type=float, default=90)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not {"h1", "h2"} <= netns_checks.namespaces():
        sys.exit("the namespaces h1, h2 are not up (tests/testbed/netns_setup.sh up 2)")
    for host_timeout in (10, 3):
        report, end, status = popdist_loss(args.popdist, args.testbed, host_timeout)
        print(f"popdist run --host-timeout {host_timeout}: report {report:.2f} s, exit {end:.2f} s, status {status}")
    acted, output = torchrun_loss(args.testbed, args.cap)
    print(f"torchrun --nnodes 1:2 c10d: {'%.2f s' % acted if acted else f'nothing within {args.cap:.0f} s'}")
    print(output[-2000:])
    with_beat, without = [], []
    for _ in range(args.runs):
        with_beat.append(step_time(args.popdist, 1000))
        without.append(step_time(args.popdist, 0))
    key = next(k for k in with_beat[0] if "step" in k and isinstance(with_beat[0][k], (int, float)))
    on = statistics.median(r[key] for r in with_beat)
    off = statistics.median(r[key] for r in without)
    print(f"step ({key}): beat 1 s {on:.4g}, beat off {off:.4g}, ratio {on / off:.3f} "
          f"(runs {[r[key] for r in with_beat]} vs {[r[key] for r in without]})")


if __name__ == "__main__":
    main()
