"""One instance of the popdist.torch seam checks, run with ``python -W error``: a sampler given to
popdist.torch.DataLoader (refused unless it shards over the job), init_process_group,
destroy_process_group and init_process_group again, then DDP steps with a loader worker and a
plain exit (popdist must print nothing there). Writes <out_dir>/instance<index>.json before the
exit; the driver checks the exit status and that stderr is empty.

    torch_seams.py <out_dir>
"""

import json
import os
import sys

import torch
import torch.distributed as dist
import torch.utils.data as data

import popdist
import popdist.torch

out_dir = sys.argv[1]
index, world = popdist.getInstanceIndex(), popdist.getNumInstances()
report = {"instance_index": index}
dataset = data.TensorDataset(torch.arange(16, dtype=torch.float32).unsqueeze(1), torch.zeros(16, 1))


def refused(**kwargs):
    try:
        popdist.torch.DataLoader(dataset, batch_size=2, **kwargs)
    except popdist.UsageError as error:
        return str(error)
    return None


report["random_sampler"] = refused(sampler=data.RandomSampler(dataset))
report["batch_sampler"] = refused(batch_sampler=data.BatchSampler(data.SequentialSampler(dataset), 2, False))
report["wrong_rank"] = refused(sampler=data.DistributedSampler(dataset, num_replicas=world, rank=(index + 1) % world))
sharded = popdist.torch.DistributedSampler(dataset, shuffle=False)
report["sharded_indices"] = [int(x) for batch in popdist.torch.DataLoader(dataset, batch_size=2, sampler=sharded)
                             for x in batch[0].flatten().tolist()]

sums = []
for _ in range(2):  # init, destroy, init again in one process
    popdist.torch.init_process_group()
    value = torch.tensor([float(index + 1)])
    dist.all_reduce(value)
    sums.append(value.item())
    dist.destroy_process_group()
report["sums"] = sums

popdist.torch.init_process_group()  # left for popdist's exit teardown, with a DDP module alive
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(1, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in popdist.torch.DataLoader(dataset, batch_size=4, num_workers=1):
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
report["weights"] = [p.detach().flatten().tolist() for p in model.parameters()]
with open(os.path.join(out_dir, f"instance{index}.json"), "w") as f:
    json.dump(report, f)
