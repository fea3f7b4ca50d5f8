"""Instance 1 dies of an uncaught exception after popdist.torch.init_process_group(), where torch
has wrapped sys.excepthook (and points sys.stderr at a buffer while the inner hooks run); the
others wait in a barrier. The traceback must reach the job's stderr before the job ends.

    uncaught_after_torch.py raise     a ValueError of the script's own
    uncaught_after_torch.py usage     popdist's own UsageError (instances pass different seeds)
"""

import sys

import torch.distributed as dist

import popdist.torch

popdist.torch.init_process_group()
if sys.argv[1] == "usage":
    popdist.torch.DistributedSampler(list(range(8)), seed=100 + dist.get_rank())  # raises on every instance
elif dist.get_rank() == 1:
    raise ValueError("boom on instance 1")
dist.barrier()  # never completes: instance 1 never arrives
# One write per line (its "\n" with it): the instances share mpirun's output, and print() under
# PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
print("unreachable: the barrier completed without instance 1\n", end="", flush=True)
