"""A torch script that leaves its last collective in flight when it ends: an all_reduce with
async_op=True that it never waits for (instance 1 starts it a second late), and no
destroy_process_group(). It knows nothing of popdist. Instance 0's gloo worker thread then
finishes that work, and releases its tensor, while the interpreter finalizes: under a launcher
that does nothing about it (torchrun, mpirun) the process aborts after the script is done
("terminate called without an active exception", status 134) in about half the runs here.
Writes <out_dir>/instance<RANK>.json before it leaves.

    torch_unwaited_at_exit.py <out_dir>
"""

import json
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1:
    time.sleep(1.0)
dist.all_reduce(torch.ones(1000), async_op=True)  # never waited for
with open(os.path.join(sys.argv[1], f"instance{rank}.json"), "w") as f:
    json.dump({"rank": rank, "world_size": dist.get_world_size()}, f)
