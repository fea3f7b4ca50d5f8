"""One instance of the 'DDP epoch' benchmark: the same DDP epoch over a synthetic data set read
through popdist.torch.DistributedSampler and through torch's own DistributedSampler, alternating
(one epoch of each per round, who goes first rotating: use an even number of rounds), timed on
the slowest instance. Instance 0 prints one JSON line: the median epoch time of each. Run
under a launcher with 2 instances.

    torch_epoch.py [rounds]"""

import json
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler as TorchSampler

import popdist.torch

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
popdist.torch.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
generator = torch.Generator().manual_seed(0)
data = TensorDataset(torch.randn(16384, 32, generator=generator), torch.randn(16384, 1, generator=generator))
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                                                      torch.nn.Linear(64, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loaders = {
    "popdist": DataLoader(data, batch_size=64, sampler=popdist.torch.DistributedSampler(data, seed=1)),
    "torch": DataLoader(data, batch_size=64, sampler=TorchSampler(data, num_replicas=world, rank=rank, seed=1)),
}


def epoch(loader, number):
    loader.sampler.set_epoch(number)
    dist.barrier()
    start = time.perf_counter()
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    elapsed = torch.tensor([time.perf_counter() - start])
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    return elapsed.item()


names = list(loaders)
times = {name: [] for name in names}
for name in names:
    epoch(loaders[name], 0)  # warm-up
for r in range(rounds):
    for j in range(len(names)):
        name = names[(j + r) % len(names)]
        times[name].append(epoch(loaders[name], r + 1))
if rank == 0:
    print(json.dumps({name: statistics.median(t) for name, t in times.items()}))
dist.destroy_process_group()
