#!/usr/bin/env python3
"""popdist.launch against Accelerate's notebook_launcher, side by side in one process (as in a
notebook), on the same tiny training function, reported as ratios (never asserted: figures
depend on the machine and its load).

The function writes the wall-clock time at which it is entered, then imports torch and runs a small DDP training over
gloo with torch's env:// (both launchers export RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT).
Per launch:
  start-up: from the call to the moment the last instance entered the function (the launcher's
            own cost: torch is not imported yet);
  total:    from the call to its return (the training included; notebook_launcher returns None,
            popdist.launch the instances' values).
notebook_launcher forks this process (torch's elastic_launch, start method fork); popdist.launch
starts `popdist run`, which starts fresh interpreters. Rounds alternate who goes first; medians.

    python3 tests/bench/bench_notebook_launch.py [--rounds 5] [--instances 2] [--steps 20]

Prints a table, then JSON lines (one per contender and one per ratio)."""

import argparse
import json
import os
import socket
import statistics
import tempfile
import time


def tiny_training(steps, stamp_dir):
    """The function both launchers run: a stamp on entry, then `steps` DDP steps of a small MLP
    (torch is imported here: a fresh interpreter pays for it, a forked one has it already)."""
    rank = int(os.environ["RANK"])
    with open(os.path.join(stamp_dir, f"start.{rank}"), "w") as file:
        file.write(repr(time.time()))
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    layers = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    model = DistributedDataParallel(layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(torch.randn(64, 32)), torch.randn(64, 1)).backward()
        optimizer.step()
    dist.destroy_process_group()
    return rank


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def timed(launch, instances):
    """(start-up s, total s) of one launch."""
    with tempfile.TemporaryDirectory() as stamps:
        began = time.time()
        launch(stamps)
        ended = time.time()
        starts = []
        for rank in range(instances):
            with open(os.path.join(stamps, f"start.{rank}")) as file:
                starts.append(float(file.read()))
    return max(starts) - began, ended - began


def contenders(instances, steps):
    import popdist
    from accelerate import notebook_launcher

    def with_popdist(stamps):
        values = popdist.launch(tiny_training, steps, stamps, num_instances=instances)
        assert values == list(range(instances)), values

    def with_accelerate(stamps):
        notebook_launcher(tiny_training, (steps, stamps), num_processes=instances, use_port=str(free_port()))

    return {"popdist.launch": with_popdist, "accelerate notebook_launcher": with_accelerate}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # the same for both: only the launcher differs
    jobs = contenders(args.instances, args.steps)
    names = list(jobs)
    samples = {name: [] for name in names}
    for round_number in range(args.rounds):
        order = names if round_number % 2 == 0 else names[::-1]
        for name in order:
            samples[name].append(timed(jobs[name], args.instances))
    medians = {name: tuple(statistics.median(s[i] for s in samples[name]) for i in (0, 1)) for name in names}
    print(f"{args.instances} instances, {args.steps} steps, {args.rounds} rounds (medians, s)")
    print(f"{'launcher':32} {'start-up':>9} {'total':>9}")
    for name in names:
        print(f"{name:32} {medians[name][0]:9.3f} {medians[name][1]:9.3f}")
    ours, theirs = medians[names[0]], medians[names[1]]
    ratios = {"start-up": ours[0] / theirs[0], "total": ours[1] / theirs[1]}
    print(f"ratio popdist.launch / notebook_launcher: start-up {ratios['start-up']:.2f}, total {ratios['total']:.2f}")
    for name in names:
        print(json.dumps({"contender": name, "startup_s": medians[name][0], "total_s": medians[name][1],
                          "samples": samples[name]}))
    print(json.dumps({"ratio": "popdist.launch / notebook_launcher", **ratios}))


if __name__ == "__main__":
    main()
