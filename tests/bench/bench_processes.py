"""Whole-process costs, each next to its baseline, interleaved (round-robin: one run of each
contender per round) with medians, printed as JSON lines:

- interpreter start-up: `import popdist; popdist.getInstanceIndex()` vs `from mpi4py import MPI`
  vs `pass` (the real interpreter, never a pyenv shim: the shim is a shell script);
- the CLI: `popdist topology` vs `/bin/true`;
- popdist::init() (C++ and Python) vs a bare MPI_Init_thread (C), timed inside the process
  around the call (singleton and under `mpirun -np 1`).

Needs nothing but the standard library: fork/exec + wait, timed with perf_counter.
    python tests/bench/bench_processes.py --bench-dir BUILD/tests/bench --cli BUILD/tools/popdist
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


# Python's popdist.init() timed inside the process, like init_popdist.cpp (it includes loading
# popdist._mpi, hence libmpi: that is what a Python user pays).
PY_INIT = """import json, time, popdist
start = time.perf_counter()
popdist.init()
elapsed = time.perf_counter() - start
if popdist.getInstanceIndex() == 0:
    print(json.dumps({"init_us": elapsed * 1e6}))
"""


def run_timed(argv, env):
    """Wall time of one run of argv (spawn to exit), output discarded. Fails loudly on exit != 0."""
    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        completed = subprocess.run(argv, env=env, stdout=devnull, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(f"bench_processes: {argv} exited {completed.returncode}: {completed.stderr.decode()[-2000:]}")
    return elapsed


def run_reported(argv, env):
    """The init_us figure a benchmark program prints about itself (in-process timing)."""
    completed = subprocess.run(argv, env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        raise SystemExit(f"bench_processes: {argv} exited {completed.returncode}: {completed.stderr[-2000:]}")
    for line in completed.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)["init_us"] * 1e-6
    raise SystemExit(f"bench_processes: {argv} printed no init_us: {completed.stdout[-2000:]}")


def interleave(contenders, rounds, measure, env):
    """contenders: list of (key, label, argv). One warm-up run each, then `rounds` rounds."""
    for _, _, argv in contenders:
        measure(argv, env)
    samples = {key: [] for key, _, _ in contenders}
    for r in range(rounds):
        for j in range(len(contenders)):
            key, _, argv = contenders[(j + r) % len(contenders)]  # rotate who goes first
            samples[key].append(measure(argv, env))
    return [(key, label, samples[key]) for key, label, _ in contenders]


def emit(group, ranks, results, clock, note=""):
    for key, label, samples in results:
        q = statistics.quantiles(samples, n=4) if len(samples) > 1 else samples * 3
        print(
            json.dumps(
                {
                    "suite": "process",
                    "group": group,
                    "ranks": ranks,
                    "key": key,
                    "label": label,
                    "median_us": statistics.median(samples) * 1e6,
                    "p25_us": q[0] * 1e6,
                    "p75_us": q[2] * 1e6,
                    "blocks": len(samples),
                    "iterations": 1,
                    "clock": clock,
                    "note": note,
                }
            ),
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", required=True, help="where popdist_bench_init and popdist_bench_init_raw are")
    parser.add_argument("--cli", required=True, help="the popdist executable to time")
    parser.add_argument("--python", default=os.path.realpath(sys.executable), help="the real interpreter")
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    args = parser.parse_args()

    # A singleton process: no launcher variables, so that detection and MPI see a plain start.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_COMM_WORLD", "PMI_", "PMIX_", "SLURM_"))}
    py = args.python
    emit(
        "py_startup",
        1,
        interleave(
            [
                ("import_popdist", "python -c 'import popdist; popdist.getInstanceIndex()'",
                 [py, "-c", "import popdist; popdist.getInstanceIndex()"]),
                ("import_mpi4py", "python -c 'from mpi4py import MPI'", [py, "-c", "from mpi4py import MPI"]),
                ("pass", "python -c pass", [py, "-c", "pass"]),
            ],
            args.rounds,
            run_timed,
            env,
        ),
        "wall",
        note=py,
    )
    emit(
        "cli_topology",
        1,
        interleave(
            [("popdist_topology", "popdist topology", [args.cli, "topology"]), ("true", "/bin/true", ["/bin/true"])],
            args.rounds,
            run_timed,
            env,
        ),
        "wall",
        note=args.cli,
    )
    init_popdist = os.path.join(args.bench_dir, "popdist_bench_init")
    init_raw = os.path.join(args.bench_dir, "popdist_bench_init_raw")
    init_rounds = max(5, args.rounds // 3)  # each MPI start costs ~0.1-0.3 s
    emit(
        "init_singleton",
        1,
        interleave(
            [("popdist_init", "popdist::init() (singleton)", [init_popdist]),
             ("py_popdist_init", "Python popdist.init() (singleton)", [py, "-c", PY_INIT]),
             ("mpi_init_thread", "MPI_Init_thread (singleton)", [init_raw])],
            init_rounds,
            run_reported,
            env,
        ),
        "wall, in-process",
    )
    mpirun = [args.mpirun, "-np", "1", "--bind-to", "none"]
    emit(
        "init_mpirun",
        1,
        interleave(
            [("popdist_init", "popdist::init() (mpirun -np 1)", mpirun + [init_popdist]),
             ("py_popdist_init", "Python popdist.init() (mpirun -np 1)", mpirun + [py, "-c", PY_INIT]),
             ("mpi_init_thread", "MPI_Init_thread (mpirun -np 1)", mpirun + [init_raw])],
            init_rounds,
            run_reported,
            env,
        ),
        "wall, in-process",
    )


if __name__ == "__main__":
    main()
