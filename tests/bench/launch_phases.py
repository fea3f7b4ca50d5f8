"""Where the time of `popdist run --num-instances 2 true` goes, next to the bare launcher's: each run
under `perf record` of the scheduler's exec and exit tracepoints (nothing stops the processes),
cut into phases at those moments; medians of interleaved rounds. Figures to judge changes by,
never assertions (tests/bench/README.md).

    python tests/bench/launch_phases.py --cli BUILD/tools/popdist [--cli OTHER/popdist] [--rounds 20]

Several --cli: the same phases for each binary (e.g. before and after a change), side by side.
Needs perf (apt-get install linux-perf) and the right to record tracepoints (root, or
kernel.perf_event_paranoid <= -1); Open MPI's mpirun on PATH.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

BARE = ["-np", "2", "--bind-to", "none"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
EVENT = re.compile(r"\s*(\d+)/(\d+)\s+(\d+\.\d+):\s+sched:(\w+):\s+(.*)")


def traced(argv, env):
    """(start, first pid, {pid: (exec ms, filename)}, {pid: end ms}) of one run: each process's last
    exec, and the end of each process (its last thread)."""
    with tempfile.NamedTemporaryFile(suffix=".perf") as data:
        subprocess.run(["perf", "record", "-q", "-e", "sched:sched_process_exec,sched:sched_process_exit", "-o",
                        data.name, "--", *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        text = subprocess.run(["perf", "script", "-i", data.name, "-F", "pid,tid,time,event,trace"],
                              capture_output=True, text=True, check=True).stdout
    execs, ends, first = {}, {}, None
    for m in map(EVENT.match, text.splitlines()):
        if not m:
            continue
        pid, ms, event, fields = int(m[1]), float(m[3]) * 1000, m[4], m[5]
        if event == "sched_process_exec":
            execs[pid] = (ms, re.search(r"filename=(\S+)", fields)[1])
            first = first or (ms, pid)
        elif "group_dead=true" in fields:
            ends[pid] = ms
    return first[0], first[1], execs, ends


def pids_of(execs, test):
    return [pid for pid, (_, name) in execs.items() if test(name)]


def phases(argv, env, popdist):
    start, root, execs, ends = traced(argv, env)
    launchers = sorted((ms, pid) for pid, (ms, name) in execs.items() if name.endswith("/mpirun"))
    launcher = launchers[-1][1]  # popdist run's first is the --version probe
    programs = pids_of(execs, lambda name: name.endswith("/true"))
    first_program = min(execs[p][0] for p in programs)
    last_program_end = max(ends[p] for p in programs)
    if not popdist:
        return {"launcher's start -> first program": first_program - start,
                "last program's end -> launcher's end": ends[launcher] - last_program_end,
                "total": ends[root] - start}
    probe = launchers[0][1] if len(launchers) > 1 else None
    agents = [pid for pid in pids_of(execs, lambda name: name == execs[root][1]) if pid != root]  # popdist _instance
    first_agent = min(execs[p][0] for p in agents)
    return {"own start -> the launcher's --version": execs[probe][0] - start if probe else 0.0,
            "the launcher's --version (a process)": ends[probe] - execs[probe][0] if probe else 0.0,
            "own start -> launcher exec": execs[launcher][0] - start,
            "launcher's start -> first agent": first_agent - execs[launcher][0],
            "first agent -> its program": first_program - first_agent,
            "last program's end -> last agent's end": max(ends[p] for p in agents) - last_program_end,
            "last agent's end -> launcher's end": ends[launcher] - max(ends[p] for p in agents),
            "launcher's end -> popdist run's end": ends[root] - ends[launcher],
            "total": ends[root] - start}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", action="append", required=True, help="a popdist binary (repeat to compare)")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    for needed in ("perf", "mpirun"):
        if shutil.which(needed) is None:
            sys.exit(f"launch_phases: {needed} is not on PATH")
    env = dict(os.environ, OMP_NUM_THREADS="1")  # no notice
    contenders = [(f"popdist run ({cli})", [os.path.abspath(cli), "run", "--num-instances", "2", "true"], True)
                  for cli in args.cli] + [("bare mpirun", ["mpirun", *BARE, "true"], False)]
    samples = {label: [] for label, _, _ in contenders}
    for r in range(args.rounds):
        for j in range(len(contenders)):
            label, argv, popdist = contenders[(j + r) % len(contenders)]
            samples[label].append(phases(argv, env, popdist))
    for label, runs in samples.items():
        print(f"{label}: medians of {len(runs)} (ms)")
        for phase in runs[0]:
            print(f"  {phase:42} {statistics.median(run[phase] for run in runs):7.1f}")


if __name__ == "__main__":
    main()
