#!/usr/bin/env python3
"""Exit-status soak: runs the README's DDP example (examples/train_torch_ddp.py) N times under a
launcher and counts how the jobs ended. A job that trains and returns must exit 0; the defect this
watches for is an abort at interpreter exit after training finished (status 134, "terminate called
without an active exception" from a gloo thread). Figures, never assertions: the README records
them.

    python3 tests/bench/soak_ddp_exit.py --launcher popdist-run --runs 50
    python3 tests/bench/soak_ddp_exit.py --launcher mpirun --runs 20
    python3 tests/bench/soak_ddp_exit.py --launcher torchrun --runs 20
    python3 tests/bench/soak_ddp_exit.py --program global-model --runs 20   # the model alive at exit
    python3 tests/bench/soak_ddp_exit.py --warnings-as-errors --runs 20     # python3 -W error

Prints one line per run (status, seconds, the first abort line seen) and a JSON summary line."""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = {"readme": os.path.join(ROOT, "examples", "train_torch_ddp.py"),
            "global-model": os.path.join(os.path.dirname(os.path.abspath(__file__)), "ddp_exit_global_model.py")}
PYTHON = sys.executable  # this interpreter (never a pyenv shim)
ABORT_MARKERS = ("terminate called", "Aborted", "core dumped", "MPI_ABORT", "Segmentation fault")
# Lines the program never prints: a Python warning (FutureWarning: ...), or popdist's teardown
# reporting a failure. (mpirun's own "Warning: could not find ..." is not the program's.)
NOISE = re.compile(r"[A-Za-z]Warning: |releasing torch\.distributed at exit failed")


def environment():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PMIX_", "SLURM_", "TORCHELASTIC_", "POPDIST_"))
           and k not in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")}
    env.update({"OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_btl_tcp_if_include": "lo",
                "OMPI_MCA_oob_tcp_if_include": "lo", "OMP_NUM_THREADS": "1",
                "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    return env


def popdist_cli(given):
    if given:
        return given
    beside = os.path.join(sysconfig.get_path("scripts"), "popdist")
    return beside if os.path.exists(beside) else shutil.which("popdist")


def command(launcher, instances, cli, program_name, checkpoint, python_options=()):
    program = [PYTHON, *python_options, PROGRAMS[program_name]]
    program += ["--checkpoint", checkpoint] if program_name == "readme" else []
    if launcher == "popdist-run":
        return [cli, "run", "--num-instances", str(instances), "--", *program]
    if launcher == "mpirun":
        return ["mpirun", "-np", str(instances), "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH", "-x",
                "OMP_NUM_THREADS", *program]
    return [PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(instances), *program[1:]]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launcher", choices=["popdist-run", "mpirun", "torchrun"], default="popdist-run")
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="readme",
                        help="readme: examples/train_torch_ddp.py; global-model: ddp_exit_global_model.py")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--cli", help="the popdist command (default: the one installed beside this Python)")
    parser.add_argument("--warnings-as-errors", action="store_true", help="run the program with python -W error")
    args = parser.parse_args()
    statuses = collections.Counter()
    aborts = noisy = 0
    python_options = ["-W", "error"] if args.warnings_as_errors else []
    with tempfile.TemporaryDirectory() as tmp:
        argv = command(args.launcher, args.instances, popdist_cli(args.cli), args.program, os.path.join(tmp, "model.pt"),
                       python_options)
        for run in range(1, args.runs + 1):
            start = time.monotonic()
            result = subprocess.run(argv, capture_output=True, text=True, env=environment(), timeout=600)
            seconds = time.monotonic() - start
            output = result.stdout + result.stderr
            marker = next((line.strip() for line in output.splitlines() if any(m in line for m in ABORT_MARKERS)), "")
            trained = "converged=" in output
            statuses[result.returncode] += 1
            aborts += bool(result.returncode != 0 or marker)
            noise = next((line.strip() for line in output.splitlines() if NOISE.search(line)), "")
            noisy += bool(noise)
            print(f"run {run}/{args.runs}: exit {result.returncode}, {seconds:.1f} s, trained={trained}"
                  f"{', ' + marker if marker else ''}{', ' + noise if noise else ''}", flush=True)
            if result.returncode != 0 and not trained:
                print(output[-2000:], flush=True)
    print(json.dumps({"launcher": args.launcher, "program": args.program, "instances": args.instances, "runs": args.runs,
                      "python_options": python_options,
                      "exit_statuses": {str(k): v for k, v in sorted(statuses.items())}, "aborted_runs": aborts,
                      "runs_with_warnings": noisy}))


if __name__ == "__main__":
    main()
