#!/usr/bin/env python3
"""`popdist run` against torchrun on the SAME unmodified env:// scripts (popdist run's torchrun
drop-in path), in one run, reported as ratios (never asserted: figures depend on the machine and
its load).

1. Whole-job time to a first all_reduce, 2 instances: `popdist run --num-instances 2` against
   `torchrun --standalone --nproc-per-node 2`, both running `torch_first_allreduce.py env`.
2. A CPU training step (torch_step.py: a compute-bound DDP MLP, timed inside the instances, the
   slowest instance's median step), 2 instances on all cores: `popdist run --mpi-global-args
   "--bind-to core"` (the binding it had by default until issue 34: Open MPI binds each of <= 2
   processes to one core), `popdist run --mpi-global-args "--bind-to none"` (its new default), and
   torchrun (binds nothing). OMP_NUM_THREADS=1 in all three, so that only the launcher differs.
   One more row, where a binding shows even on 2 cores: 1 instance, 2 threads.
3. OMP_NUM_THREADS, under torchrun (the launcher is not the variable): 1 instance with 1 thread
   vs as many as cores; 2 instances with 1 each vs as many as cores each (what torch uses when it
   is unset, oversubscribing). Given explicitly: torchrun would set 1 itself for 2 instances.

Every job of a round runs once per round, who goes first rotating; medians over rounds.

    python3 tests/bench/bench_launch.py [--rounds 5] [--steps 30] [--cli PATH_TO_popdist]

Prints a table, then JSON lines (one per contender and one per ratio)."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sysconfig
import time

from bench_torch import HERE, PYTHON, environment, timed

CORES = os.cpu_count()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per job, after 5 of warm-up")
    parser.add_argument("--cli", default=os.path.join(sysconfig.get_path("scripts"), "popdist"))
    args = parser.parse_args()
    cli = args.cli if os.path.exists(args.cli) else shutil.which("popdist")
    first, step = os.path.join(HERE, "torch_first_allreduce.py"), [os.path.join(HERE, "torch_step.py"), str(args.steps)]

    def popdist(n, *extra):
        return [cli, "run", "--num-instances", str(n), *extra, "--"]

    def torchrun(n):  # `python -m torch.distributed.run` is torchrun (its console script may be a pyenv shim)
        return [PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(n)]

    # Explicit both ways: the binding popdist run had until issue 34 (Open MPI binds <= 2 processes to
    # one core each), and none (its new default, and torchrun's).
    bound, unbound = ("--mpi-global-args", "--bind-to core"), ("--mpi-global-args", "--bind-to none")
    c = CORES
    jobs = {  # name: (argv, OMP_NUM_THREADS); "N x T": N instances of T threads
        "first: popdist run": (popdist(2) + [PYTHON, first, "env"], "1"),
        "first: torchrun": (torchrun(2) + [first, "env"], "1"),
        "popdist run --bind-to core, 2 x 1": (popdist(2, *bound) + [PYTHON, *step], "1"),
        "popdist run --bind-to none, 2 x 1": (popdist(2, *unbound) + [PYTHON, *step], "1"),
        "torchrun, 2 x 1": (torchrun(2) + step, "1"),
        f"torchrun, 2 x {c}": (torchrun(2) + step, str(c)),
        f"popdist run --bind-to core, 1 x {c}": (popdist(1, *bound) + [PYTHON, *step], str(c)),
        f"popdist run --bind-to none, 1 x {c}": (popdist(1, *unbound) + [PYTHON, *step], str(c)),
        "torchrun, 1 x 1": (torchrun(1) + step, "1"),
        f"torchrun, 1 x {c}": (torchrun(1) + step, str(c)),
    }

    aborted = {name: 0 for name in jobs}  # step jobs that printed their figure, then failed at exit

    def run(name):
        argv, threads = jobs[name]
        env = {**environment(), "OMP_NUM_THREADS": threads}
        if name.startswith("first"):
            return {"s": timed(argv, env)[0]}
        result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        # `popdist run` tags each line with the instance ("[1,0]<stdout>:"): the JSON follows the tag.
        lines = [line.split(">:", 1)[-1] for line in result.stdout.splitlines()]
        found = [line for line in lines if line.startswith("{")]
        if not found:
            raise SystemExit(f"bench_launch: {argv} exited {result.returncode}:\n{result.stderr[-3000:]}")
        # A gloo worker thread dropping its last work during interpreter teardown can abort an instance
        # after the script is done (docs/guide/torch.md, "Clean exit"): the step figure still stands.
        aborted[name] += result.returncode != 0
        return json.loads(found[-1])

    load_before = os.getloadavg()
    order = list(jobs)
    for name in order:  # warm-up: page cache, bytecode
        run(name)
    samples = {name: [] for name in order}
    for r in range(args.rounds):
        for j in range(len(order)):
            name = order[(j + r) % len(order)]
            samples[name].append(run(name))
        print(f"round {r + 1}/{args.rounds} done, load average {os.getloadavg()[0]:.1f}", flush=True)
    load_after = os.getloadavg()

    figures = {}
    for name, runs in samples.items():
        values = [s["s" if name.startswith("first") else "step_s"] for s in runs]
        figures[name] = {"median_s": statistics.median(values), "samples_s": values, "argv": jobs[name][0],
                         "OMP_NUM_THREADS": jobs[name][1], "failed_at_exit": aborted[name],
                         **{k: runs[0][k] for k in ("threads", "cpus") if k in runs[0]}}

    def ratio(title, name, base):
        return title, name, base, figures[name]["median_s"] / figures[base]["median_s"]

    ratios = [
        ratio("time to first all_reduce, 2 instances (whole job)", "first: popdist run", "first: torchrun"),
        ratio("CPU step, 2 x 1 thread: popdist run --bind-to core", "popdist run --bind-to core, 2 x 1",
              "torchrun, 2 x 1"),
        ratio("CPU step, 2 x 1 thread: popdist run --bind-to none", "popdist run --bind-to none, 2 x 1",
              "torchrun, 2 x 1"),
        ratio(f"CPU step, 1 x {c} threads: popdist run --bind-to core", f"popdist run --bind-to core, 1 x {c}",
              f"torchrun, 1 x {c}"),
        ratio(f"CPU step, 1 x {c} threads: popdist run --bind-to none", f"popdist run --bind-to none, 1 x {c}",
              f"torchrun, 1 x {c}"),
        ratio(f"OMP_NUM_THREADS under torchrun, 1 instance: {c} vs 1", f"torchrun, 1 x {c}", "torchrun, 1 x 1"),
        ratio(f"OMP_NUM_THREADS under torchrun, 2 instances: {c} each vs 1", f"torchrun, 2 x {c}", "torchrun, 2 x 1"),
    ]
    header = f"benchmark (medians of {args.rounds} rounds)"
    print(f"{header:<58} {'measured':>9} {'baseline':>9} {'ratio':>6}")
    for title, name, base, value in ratios:
        measured, baseline = figures[name]["median_s"] * 1e3, figures[base]["median_s"] * 1e3
        print(f"{title:<58} {measured:>7.1f}ms {baseline:>7.1f}ms {value:>6.2f}")
    for name, count in aborted.items():
        if count:
            print(f"{name}: {count} of {args.rounds + 1} jobs failed at exit after printing their figure")
    print(f"load average before {' '.join(f'{v:.2f}' for v in load_before)}, after "
          f"{' '.join(f'{v:.2f}' for v in load_after)} on {c} cores; 'N x T': N instances of T threads")
    print(json.dumps({"meta": {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cores": c,
                               "rounds": args.rounds, "steps": args.steps,
                               "loadavg_before": load_before, "loadavg_after": load_after}}))
    for name, figure in figures.items():
        print(json.dumps({"bench": "launch", "contender": name, **figure}))
    for title, name, base, value in ratios:
        print(json.dumps({"bench": "launch", "ratio": title, "measured": name, "baseline": base, "value": value}))


if __name__ == "__main__":
    main()
