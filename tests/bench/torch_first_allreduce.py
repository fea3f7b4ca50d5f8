"""One instance of the 'time to first all_reduce' benchmark (run by bench_torch.py as a whole job).

    torch_first_allreduce.py popdist    popdist.torch.init_process_group() (under `popdist run`)
    torch_first_allreduce.py env        torch.distributed.init_process_group("gloo") with env:// (torchrun)

Does one all_reduce and exits: the job's wall time is what bench_torch.py measures."""

import sys

import torch
import torch.distributed as dist

if sys.argv[1] == "popdist":
    import popdist.torch

    popdist.torch.init_process_group("gloo")
else:
    dist.init_process_group("gloo")
value = torch.ones(1)
dist.all_reduce(value)
assert value.item() == dist.get_world_size()
dist.destroy_process_group()
