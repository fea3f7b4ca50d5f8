#!/usr/bin/env python3
"""PyTorch DistributedDataParallel training with popdist, on synthetic data (CPU, gloo).

    popdist run --num-instances 4 -- python3 examples/train_torch_ddp.py    # 4 instances
    mpirun -np 4 python3 examples/train_torch_ddp.py                        # the same, plain mpirun
    torchrun --standalone --nproc-per-node 4 examples/train_torch_ddp.py     # the same, torchrun
    python3 examples/train_torch_ddp.py                                     # one instance

popdist.torch.init_process_group() creates torch.distributed's default group (rank = instance
index); popdist.torch.DataLoader gives each instance its shard of the same synthetic regression
data set, reshuffled every epoch with a seed all instances agreed on. DDP averages the gradients.
Instance 0 prints one line per epoch and writes the checkpoint; at the end every instance checks
that its weights equal instance 0's, and instance 0 prints ``converged=True`` when the loss on the
whole data set fell below 1% of the initial one.
"""

import argparse
import os
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import popdist
import popdist.torch


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2048, help="size of the whole synthetic data set")
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=32, help="per-instance batch size")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(), "popdist-torch-example.pt"))
    return parser.parse_args()


def synthetic_data(samples, features):
    """The same data set on every instance (fixed generator seed): y = x . w* + noise."""
    generator = torch.Generator().manual_seed(1234)
    x = torch.randn(samples, features, generator=generator)
    true_weights = torch.randn(features, 1, generator=generator)
    y = x @ true_weights + 0.01 * torch.randn(samples, 1, generator=generator)
    return torch.utils.data.TensorDataset(x, y)


def whole_data_loss(model, dataset):
    x, y = dataset.tensors
    with torch.no_grad():
        return torch.nn.functional.mse_loss(model(x), y).item()


def main():
    args = parse_args()
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts instance 0's)
    popdist.torch.init_process_group()
    me, instances = dist.get_rank(), dist.get_world_size()
    device = popdist.torch.device()

    dataset = synthetic_data(args.samples, args.features)
    loader = popdist.torch.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    model = DistributedDataParallel(torch.nn.Linear(args.features, 1).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
    initial = whole_data_loss(model.module, dataset)
    if me == 0:
        print(f"[instance 0] training on {instances} instance(s), {len(loader)} batches of {args.batch_size} "
              f"per instance per epoch; initial loss {initial:.4f}", flush=True)

    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        total = torch.zeros(2)  # sum of losses, batches: averaged over the job below
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
            loss.backward()  # DDP all-reduces the gradients here
            optimizer.step()
            total += torch.tensor([loss.item(), 1.0])
        dist.all_reduce(total)
        if me == 0:
            print(f"[instance 0] epoch {epoch + 1}/{args.epochs}: mean training loss {total[0] / total[1]:.5f}",
                  flush=True)

    if me == 0:
        torch.save(model.module.state_dict(), args.checkpoint)
    # Every instance compares its weights with instance 0's.
    weights = torch.cat([p.detach().flatten() for p in model.module.parameters()]).cpu()
    reference = weights.clone()
    dist.broadcast(reference, src=0)
    in_sync = torch.tensor([float(torch.equal(weights, reference))])
    dist.all_reduce(in_sync, op=dist.ReduceOp.MIN)
    final = whole_data_loss(model.module, dataset)
    if me == 0:
        print(f"[instance 0] checkpoint {args.checkpoint}", flush=True)
        print(f"[instance 0] final loss {final:.6f} (initial {initial:.4f}); converged={final < 0.01 * initial}; "
              f"weights in sync across instances: {bool(in_sync.item())}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
