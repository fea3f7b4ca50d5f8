"""One instance of the popdist.lightning checks under a launcher: devices x num_nodes that disagree
with the job (ignored with a warning by set_world_size, an error from validate_settings), then a tiny DDP fit with
PopdistEnvironment and trainer_kwargs(). Writes <out_dir>/instance<rank>.json; the checkpoints go
to <out_dir>/run (the driver counts them)."""

import json
import os
import sys
import warnings

import lightning
import torch

import popdist
import popdist.lightning
import popdist.torch

out_dir = sys.argv[1]
report = {"instance_index": popdist.getInstanceIndex(), "trainer_kwargs": popdist.lightning.trainer_kwargs()}


class Tiny(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        torch.manual_seed(popdist.getInstanceIndex())  # different initial weights: DDP broadcasts instance 0's
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_index):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_index):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def predict_step(self, batch, batch_index):
        return self.layer(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def trainer(**kwargs):
    return lightning.Trainer(accelerator="cpu", strategy="ddp", plugins=[popdist.lightning.PopdistEnvironment()],
                             max_epochs=2, default_root_dir=os.path.join(out_dir, "run"), logger=False,
                             enable_progress_bar=False, enable_model_summary=False, **kwargs)


data = torch.utils.data.TensorDataset(torch.randn(32, 4, generator=torch.Generator().manual_seed(1)),
                                      torch.randn(32, 1, generator=torch.Generator().manual_seed(2)))
loader = popdist.torch.DataLoader(data, batch_size=4, shuffle=True)

# Lightning's devices x num_nodes disagreeing with the job: set_world_size ignores it with a
# warning, as Lightning's own environments ignore it; validate_settings (Lightning's check of its
# launch settings) raises naming both.
environment = popdist.lightning.PopdistEnvironment()
wrong = report["trainer_kwargs"]["devices"] + 1
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    environment.set_world_size(wrong * report["trainer_kwargs"]["num_nodes"])
report["set_world_size_warnings"] = [str(w.message) for w in caught]
try:
    environment.validate_settings(wrong, report["trainer_kwargs"]["num_nodes"])
    report["mismatch_error"] = None
except popdist.UsageError as error:
    report["mismatch_error"] = str(error)

model = Tiny()
t = trainer(**report["trainer_kwargs"])
t.fit(model, loader)
report["sampler"] = type(t.train_dataloader.sampler).__name__  # before validate(), which forgets it
# validate() and predict() with popdist.torch's DataLoader: Lightning rebuilds it with sampler=.
validated = t.validate(model, popdist.torch.DataLoader(data, batch_size=4))
predicted = t.predict(model, popdist.torch.DataLoader(data, batch_size=4))
report.update(validated=sorted(validated[0]), predicted_samples=sum(len(p) for p in predicted))
report.update(global_rank=t.global_rank, world_size=t.world_size, local_rank=t.local_rank, node_rank=t.node_rank,
              is_global_zero=t.is_global_zero,
              weights=[p.detach().flatten().tolist() for p in model.parameters()])
with open(os.path.join(out_dir, f"instance{report['instance_index']}.json"), "w") as f:
    json.dump(report, f)
