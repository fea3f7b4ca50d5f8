"""Where the time of `popdist run --num-instances 2 true` goes, next to the bare launcher's: each run
under `strace -f --seccomp-bpf -e trace=execve,exit_group` (the process tree stops only at its
execs and exits, a few tens of microseconds each), cut into phases at those moments; medians of
interleaved rounds. Figures to judge changes by, never assertions (tests/bench/README.md).

    python tests/bench/launch_phases.py --cli BUILD/tools/popdist [--cli OTHER/popdist] [--rounds 20]

Several --cli: the same phases for each binary (e.g. before and after a change), side by side.
Needs strace (apt-get install strace); Open MPI's mpirun on PATH.
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
LINE = re.compile(r"(\d+)\s+(\d+\.\d+) (.*)")


def traced(argv, env):
    """[(pid, ms, what)] of one run: the last exec of each process, and each process's end."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as log:
        subprocess.run(["strace", "-f", "--seccomp-bpf", "-ttt", "-e", "trace=execve,exit_group", "-o", log.name,
                        *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        events = [(int(m[1]), float(m[2]) * 1000, m[3]) for m in map(LINE.match, log) if m]
    execs = {}
    for pid, ms, what in events:
        if what.startswith("execve("):
            execs[pid] = (ms, what)  # execvp tries PATH in order: the last one ran
    ends = {pid: ms for pid, ms, what in events if what.startswith("+++ exited") or what.startswith("+++ killed")}
    return events[0][1], events[0][0], execs, ends


def pids_of(execs, test):
    return [pid for pid, (_, what) in execs.items() if test(what)]


def phases(argv, env, popdist):
    start, root, execs, ends = traced(argv, env)
    launcher = pids_of(execs, lambda w: re.match(r'execve\("[^"]*mpirun"', w) and '"--version"' not in w)[0]
    programs = pids_of(execs, lambda w: '["true"]' in w)
    first_program = min(execs[p][0] for p in programs)
    last_program_end = max(ends[p] for p in programs)
    if not popdist:
        return {"launcher's start -> first program": first_program - start,
                "last program's end -> launcher's end": ends[launcher] - last_program_end,
                "total": ends[root] - start}
    probe = pids_of(execs, lambda w: '"--version"' in w)
    agents = pids_of(execs, lambda w: '"_instance"' in w)
    first_agent = min(execs[p][0] for p in agents)
    result = {"own start -> the launcher's --version": execs[probe[0]][0] - start if probe else 0.0,
              "the launcher's --version (a process)": ends[probe[0]] - execs[probe[0]][0] if probe else 0.0,
              "own start -> launcher exec": execs[launcher][0] - start,
              "launcher's start -> first agent": first_agent - execs[launcher][0],
              "first agent -> its program": first_program - first_agent,
              "last program's end -> last agent's end": max(ends[p] for p in agents) - last_program_end,
              "last agent's end -> launcher's end": ends[launcher] - max(ends[p] for p in agents),
              "launcher's end -> popdist run's end": ends[root] - ends[launcher],
              "total": ends[root] - start}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", action="append", required=True, help="a popdist binary (repeat to compare)")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    for needed in ("strace", "mpirun"):
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
