"""`popdist run --num-instances 2 true` on each backend against its bare launcher, side by side in
one run (interleaved: one run of each contender per round, rotating who goes first; medians).
Figures to judge changes by, never assertions (tests/bench/README.md).

    python tests/bench/bench_backends.py --cli BUILD/tools/popdist [--rounds 30]
    salloc -N2 -n2 python tests/bench/bench_backends.py ... --backend srun   # steps of the allocation

A backend whose launcher is not installed is left out with a line naming it; srun outside an
allocation too (each run would wait for an allocation of its own).
"""

import argparse
import os
import shutil
import statistics
import sys

from bench_processes import run_timed  # spawn to exit, output discarded; fails loudly

LAUNCHERS = {  # backend: (the bare launcher's name, its words for 2 copies of `true` on this machine)
    "openmpi": ("mpirun", ["-np", "2", "--bind-to", "none"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])),
    "hydra": ("mpiexec.hydra", ["-n", "2"]),
    "srun": ("srun", ["-n", "2"]),
}


def contenders(cli, only):
    found = []
    for backend, (name, words) in LAUNCHERS.items():
        if only and backend not in only:
            continue
        path = shutil.which(name)
        if path is None:
            print(f"bench_backends: {name} not on PATH: backend {backend} left out")
            continue
        if backend == "srun" and "SLURM_JOB_ID" not in os.environ:
            print("bench_backends: not inside a Slurm allocation (salloc): backend srun left out")
            continue
        found.append((f"popdist run --backend {backend}", [cli, "run", "--backend", backend, "--num-instances", "2",
                                                            "true"]))
        found.append((f"bare {name}", [name, *words, "true"]))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="the popdist binary")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--backend", action="append", choices=sorted(LAUNCHERS), help="only these (default: all)")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1")  # no notice
    runs = contenders(os.path.abspath(args.cli), args.backend)
    for _, argv in runs:
        run_timed(argv, env)  # warm-up
    samples = {label: [] for label, _ in runs}
    for r in range(args.rounds):
        for j in range(len(runs)):
            label, argv = runs[(j + r) % len(runs)]
            samples[label].append(run_timed(argv, env))
    medians = {label: statistics.median(values) for label, values in samples.items()}
    print(f"| contender | median of {args.rounds} | against its bare launcher |")
    print("|---|---|---|")
    for (label, _), (bare, _) in zip(runs[::2], runs[1::2]):
        over = medians[label] - medians[bare]
        print(f"| {label} | {medians[label] * 1e3:.1f} ms | +{over * 1e3:.1f} ms, {medians[label] / medians[bare]:.2f}x |")
        print(f"| {bare} | {medians[bare] * 1e3:.1f} ms | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
