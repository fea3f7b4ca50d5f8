"""One instance of the 'CPU training step' benchmark: an unmodified env:// DDP script (torchrun's
variables; under `popdist run` its drop-in path), the same under every launcher.

A compute-bound MLP (512-1024-1024-10, batch 512, synthetic data, gloo): `warmup` steps, then
`steps` steps each timed on every instance. Instance 0 prints one JSON line: the median over steps
of the slowest instance's step time, and what the instances ran with (threads, CPU affinity).

    torch_step.py [steps] [warmup]"""

import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 5
dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
    torch.nn.Linear(1024, 10)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(512, 512), torch.randint(0, 10, (512,))


def step():
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()  # DDP all-reduces the gradients here
    optimizer.step()


for _ in range(warmup):
    step()
dist.barrier()
times = []
for _ in range(steps):
    start = time.perf_counter()
    step()
    times.append(time.perf_counter() - start)
slowest = torch.tensor(times)
dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # per step, the slowest instance
info = torch.tensor([torch.get_num_threads(), len(os.sched_getaffinity(0))], dtype=torch.int64)
gathered = [torch.zeros_like(info) for _ in range(dist.get_world_size())]
dist.all_gather(gathered, info)
if dist.get_rank() == 0:
    print(json.dumps({"step_s": statistics.median(slowest.tolist()), "instances": dist.get_world_size(),
                      "threads": [int(g[0]) for g in gathered], "cpus": [int(g[1]) for g in gathered]}))
dist.destroy_process_group()
