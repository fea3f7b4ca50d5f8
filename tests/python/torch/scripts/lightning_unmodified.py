"""A Lightning script that knows nothing of popdist (Lightning's own style: a LightningModule, a
plain DataLoader, Trainer(strategy="ddp")). Writes <out_dir>/instance<global rank>.json with the
cluster environment Lightning chose and where it rendezvoused.

    lightning_unmodified.py <out_dir> <devices> <num_nodes> [hide-mpi4py]

hide-mpi4py: Lightning finds no mpi4py (as on a machine without it).
"""

import json
import os
import sys

if "hide-mpi4py" in sys.argv[4:]:
    sys.modules["mpi4py"] = None  # `from mpi4py import MPI` raises ImportError

import lightning
import torch
from torch.utils.data import DataLoader, TensorDataset


class Tiny(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_index):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


out_dir, devices, num_nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = TensorDataset(torch.randn(32, 4, generator=torch.Generator().manual_seed(1)),
                     torch.randn(32, 1, generator=torch.Generator().manual_seed(2)))
model = Tiny()
trainer = lightning.Trainer(accelerator="cpu", devices=devices, num_nodes=num_nodes, strategy="ddp", max_epochs=1,
                            logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False)
trainer.fit(model, DataLoader(data, batch_size=4))
environment = trainer.strategy.cluster_environment
report = {"environment": type(environment).__name__, "main_address": environment.main_address,
          "main_port": environment.main_port, "global_rank": trainer.global_rank, "world_size": trainer.world_size,
          "master": [os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")],
          "weights": [p.detach().flatten().tolist() for p in model.parameters()]}
with open(os.path.join(out_dir, f"instance{trainer.global_rank}.json"), "w") as f:
    json.dump(report, f)
