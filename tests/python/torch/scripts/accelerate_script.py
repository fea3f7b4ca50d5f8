"""A HuggingFace Accelerate training script, knowing nothing of popdist: Accelerator() reads the
launcher's variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), prepares a model,
optimizer and loader, trains a few steps and gathers. Report in <out_dir>/instance<process_index>.json.

    accelerate_script.py <out_dir>
"""

import json
import os
import sys

import torch
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
torch.manual_seed(accelerator.process_index)  # different initial weights: DDP must broadcast rank 0's
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
generator = torch.Generator().manual_seed(3)
data = torch.utils.data.TensorDataset(torch.randn(32, 4, generator=generator), torch.randn(32, 1, generator=generator))
loader = torch.utils.data.DataLoader(data, batch_size=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
batches = 0
for x, y in loader:
    accelerator.backward(torch.nn.functional.mse_loss(model(x), y))
    optimizer.step()
    optimizer.zero_grad()
    batches += 1
gathered = accelerator.gather(torch.tensor([accelerator.process_index])).tolist()
weights = [p.detach().flatten().tolist() for p in accelerator.unwrap_model(model).parameters()]
report = {"process_index": accelerator.process_index, "num_processes": accelerator.num_processes,
          "local_process_index": accelerator.local_process_index, "distributed_type": str(accelerator.distributed_type),
          "gathered": gathered, "batches": batches, "weights": weights}
with open(os.path.join(sys.argv[1], f"instance{accelerator.process_index}.json"), "w") as f:
    json.dump(report, f)
accelerator.end_training()
