#!/usr/bin/env python3
"""Lightning DDP training with popdist, on synthetic data (CPU).

    popdist run --num-instances 2 -- python3 examples/train_lightning.py
    mpirun -np 2 python3 examples/train_lightning.py
    python3 examples/train_lightning.py

popdist.lightning.PopdistEnvironment tells Lightning each process's rank (`popdist run` and
mpirun set no RANK), agrees the main address and port, and trainer_kwargs() gives the devices and
num_nodes of the job. popdist.torch.DataLoader shards the data with an agreed seed (Lightning
keeps a DistributedSampler it is given). Lightning's rank-zero-only logging and checkpointing
then happen on instance 0 only: one checkpoint file. Instance 0 prints ``converged=True`` when
the loss on the whole data set fell below 1% of the initial one.
"""

import argparse
import os
import tempfile

import lightning
import torch

import popdist.lightning
import popdist.torch


class Regression(lightning.LightningModule):
    def __init__(self, features, learning_rate):
        super().__init__()
        self.layer = torch.nn.Linear(features, 1)
        self.learning_rate = learning_rate

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_index):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("loss", loss, on_epoch=True, on_step=False, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.learning_rate)


def synthetic_data(samples, features):
    generator = torch.Generator().manual_seed(1234)
    x = torch.randn(samples, features, generator=generator)
    y = x @ torch.randn(features, 1, generator=generator) + 0.01 * torch.randn(samples, 1, generator=generator)
    return torch.utils.data.TensorDataset(x, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--checkpoint-dir", default=os.path.join(tempfile.gettempdir(), "popdist-lightning-example"))
    args = parser.parse_args()

    torch.manual_seed(0)
    dataset = synthetic_data(args.samples, args.features)
    loader = popdist.torch.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    model = Regression(args.features, learning_rate=0.1)
    x, y = dataset.tensors
    with torch.no_grad():
        initial = torch.nn.functional.mse_loss(model(x), y).item()

    trainer = lightning.Trainer(accelerator="cpu", strategy="ddp", plugins=[popdist.lightning.PopdistEnvironment()],
                                max_epochs=args.epochs, default_root_dir=args.checkpoint_dir, logger=False,
                                enable_progress_bar=False, enable_model_summary=False,
                                **popdist.lightning.trainer_kwargs())
    trainer.fit(model, loader)

    with torch.no_grad():
        final = torch.nn.functional.mse_loss(model(x), y).item()
    if trainer.global_rank == 0:
        print(f"[instance 0] trained on {trainer.world_size} instance(s); final loss {final:.6f} "
              f"(initial {initial:.4f}); converged={final < 0.01 * initial}; "
              f"checkpoint {trainer.checkpoint_callback.best_model_path or trainer.checkpoint_callback.last_model_path}",
              flush=True)


if __name__ == "__main__":
    main()
