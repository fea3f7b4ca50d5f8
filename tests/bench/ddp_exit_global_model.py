#!/usr/bin/env python3
"""A short DDP script in the shape that exposed the abort at exit: the model lives at module level
(alive until the interpreter's own teardown), a few steps, then destroy_process_group() while the
module still holds the group (as tests/python/torch/scripts/ddp_checks.py, which aborted this way
under srun). Used by soak_ddp_exit.py --program global-model."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import popdist.torch

popdist.torch.init_process_group()
torch.manual_seed(0)
model = DistributedDataParallel(torch.nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
generator = torch.Generator().manual_seed(1)
data = torch.utils.data.TensorDataset(torch.randn(512, 16, generator=generator), torch.randn(512, 1, generator=generator))
loader = popdist.torch.DataLoader(data, batch_size=32, shuffle=True)
for epoch in range(2):
    loader.set_epoch(epoch)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
print(f"converged=n/a trained {len(loader)} batches per epoch", flush=True)
dist.destroy_process_group()
