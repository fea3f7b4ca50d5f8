#!/usr/bin/env python3
"""popdist.torch side by side with torch's own tools, in one run, reported as ratios (never
asserted: figures depend on the machine and its load).

1. Whole-job time to a first all_reduce, 2 instances: `popdist run --num-instances 2 -- python
   torch_first_allreduce.py popdist` against `torchrun --standalone --nproc-per-node 2
   torch_first_allreduce.py env`; interleaved (one run of each per round, who goes first rotating),
   medians. Target: popdist <= 0.6 x torchrun.
2. A DDP epoch (2 instances under `popdist run`) reading through popdist.torch.DistributedSampler
   against torch's DistributedSampler, alternating inside one job (torch_epoch.py). Target: the
   throughput ratio popdist/torch >= 0.98.

    python3 tests/bench/bench_torch.py [--rounds 5] [--cli PATH_TO_popdist]

Prints a table and one JSON line of results; needs torch and the installed popdist package."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = sys.executable  # this interpreter (never a pyenv shim, which is a shell script)
MPI_ENVIRONMENT = {"OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_btl_tcp_if_include": "lo",
                   "OMPI_MCA_oob_tcp_if_include": "lo", "OMP_NUM_THREADS": "1"}


def environment():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PMIX_", "SLURM_", "TORCHELASTIC_", "POPDIST_"))
           and k not in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")}
    env.update(MPI_ENVIRONMENT)
    return env


def timed(argv, env):
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"bench_torch: {argv} exited {result.returncode}:\n{result.stderr[-3000:]}")
    return elapsed, result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of whole jobs; the epoch runs twice as many")
    parser.add_argument("--cli", default=os.path.join(sysconfig.get_path("scripts"), "popdist"))
    args = parser.parse_args()
    cli = args.cli if os.path.exists(args.cli) else shutil.which("popdist")
    script = os.path.join(HERE, "torch_first_allreduce.py")
    env = environment()
    contenders = [
        ("popdist", [cli, "run", "--num-instances", "2", "--", PYTHON, script, "popdist"]),
        # `python -m torch.distributed.run` is torchrun (its console script may be a pyenv shim).
        ("torchrun", [PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", script, "env"]),
    ]
    load_before = os.getloadavg()
    for _, argv in contenders:  # warm-up: page cache, bytecode
        timed(argv, env)
    samples = {key: [] for key, _ in contenders}
    for r in range(args.rounds):
        for j in range(len(contenders)):
            key, argv = contenders[(j + r) % len(contenders)]
            samples[key].append(timed(argv, env)[0])
    first = {key: statistics.median(values) for key, values in samples.items()}
    print(f"time to first all_reduce, medians of {args.rounds}: {first}", flush=True)

    # An even number of rounds: each sampler goes first equally often.
    _, out = timed([cli, "run", "--num-instances", "2", "--", PYTHON, os.path.join(HERE, "torch_epoch.py"),
                    str(2 * args.rounds)], env)
    # `popdist run` tags each line with the instance ("[1,0]<stdout>:"): the JSON follows the tag.
    lines = [line.split(">:", 1)[-1] for line in out.splitlines()]
    epoch = json.loads([line for line in lines if line.startswith("{")][-1])
    load_after = os.getloadavg()

    results = {
        "first_allreduce_s": first, "first_allreduce_ratio": first["popdist"] / first["torchrun"],
        "epoch_s": epoch, "epoch_throughput_ratio": epoch["torch"] / epoch["popdist"],
        "rounds": args.rounds, "loadavg_before": load_before, "loadavg_after": load_after, "cores": os.cpu_count(),
    }
    print(f"{'benchmark':<52} {'popdist':>10} {'baseline':>10} {'ratio':>7} {'target':>8}")
    print(f"{'time to first all_reduce, 2 instances (whole job)':<52} {first['popdist']:>9.2f}s "
          f"{first['torchrun']:>9.2f}s {results['first_allreduce_ratio']:>7.2f} {'<= 0.60':>8}")
    print(f"{'DDP epoch, popdist vs torch sampler (throughput)':<52} {epoch['popdist']:>9.3f}s "
          f"{epoch['torch']:>9.3f}s {results['epoch_throughput_ratio']:>7.2f} {'>= 0.98':>8}")
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} on {os.cpu_count()} cores")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
