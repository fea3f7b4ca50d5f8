"""A script written for torchrun, knowing nothing of popdist: torch.distributed's env:// rendezvous
(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), one all_reduce, a report in <out_dir>/instance<RANK>.json.

    torch_env_script.py <out_dir>
"""

import json
import os
import sys

import torch
import torch.distributed as dist

NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "MASTER_ADDR",
         "MASTER_PORT")

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
report = {"rank": dist.get_rank(), "world_size": dist.get_world_size(), "all_reduce": value.item(),
          "environment": {name: os.environ.get(name) for name in NAMES}}
with open(os.path.join(sys.argv[1], f"instance{dist.get_rank()}.json"), "w") as f:
    json.dump(report, f)
dist.destroy_process_group()
