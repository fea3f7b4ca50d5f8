"""One instance of the popdist.torch checks, run under a launcher (or alone). Writes what it saw to
<out_dir>/instance<rank>.json; the pytest driver compares the instances' files.

    ddp_checks.py <out_dir>            the full check: process group, all_reduce, shards, seeds, DDP
    ddp_checks.py <out_dir> failure    only init_process_group(timeout=...) and the error it raised
"""

import json
import os
import sys
import time

start = time.monotonic()
out_dir, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "full")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import popdist  # noqa: E402
import popdist.torch  # noqa: E402

report = {"instance_index": popdist.getInstanceIndex(), "num_instances": popdist.getNumInstances(),
          "launcher": popdist.topology().launcher}


def write():
    with open(os.path.join(out_dir, f"instance{report['instance_index']}.json"), "w") as f:
        json.dump(report, f)


if mode == "failure":
    start = time.monotonic()
    try:
        popdist.torch.init_process_group(timeout=float(os.environ.get("CHECK_TIMEOUT", "5")))
        report["error"] = None
    except popdist.torch.RendezvousError as error:
        report["error"] = {"type": type(error).__name__, "message": str(error),
                           "is_popdist_error": isinstance(error, popdist.PopDistError)}
    report["seconds"] = time.monotonic() - start
    write()
    sys.exit(0)

popdist.torch.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
# Where this instance reached the rendezvous store: torch's TCPStore or the job's store (None under
# torchrun and in a world of one).
store = popdist.torch._state.store
report["store_address"] = store.host if isinstance(store, dist.TCPStore) else getattr(store, "address", None)
report.update(rank=rank, world_size=world, backend=str(dist.get_backend()), device=str(popdist.torch.device()))
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
report["all_reduce"] = value.item()

# Shards: 10 samples (not a multiple of 3 or 4: padding happens), two epochs, drop_last both ways.
dataset = list(range(10))
sampler = popdist.torch.DistributedSampler(dataset)  # seed=None: instance 0 draws
report["agreed_seed"] = sampler.seed
report["shards"] = {}
for epoch in (0, 1):
    sampler.set_epoch(epoch)
    report["shards"][str(epoch)] = list(sampler)
dropping = popdist.torch.DistributedSampler(dataset, seed=7, drop_last=True)
report["shard_drop_last"] = list(dropping)
loader = popdist.torch.DataLoader(torch.utils.data.TensorDataset(torch.arange(50.0)), batch_size=4, shuffle=True,
                                  seed=11)
report["batches"] = len(list(loader))

# torch's signature: positional or keyword num_replicas/rank agreeing with popdist's context; the
# same indices as torch's own sampler with the same arguments; seed=None is torch's seed on
# instance 0 (torch.manual_seed makes it reproducible); a disagreeing value is an error naming both.
report["torch_signature"] = [list(popdist.torch.DistributedSampler(dataset, world, rank, seed=3)),
                             list(popdist.torch.DistributedSampler(dataset, num_replicas=world, rank=rank, seed=3))]
report["same_as_torch"] = True
for shuffle in (True, False):
    for drop_last in (False, True):
        ours = popdist.torch.DistributedSampler(dataset, world, rank, shuffle, 7, drop_last)
        theirs = torch.utils.data.distributed.DistributedSampler(dataset, world, rank, shuffle, 7, drop_last)
        for epoch in (0, 1):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            report["same_as_torch"] &= list(ours) == list(theirs)
torch.manual_seed(1234 + 0)  # the same everywhere, as seed_everything does; instance 0's decides
report["seed_none_after_manual_seed"] = popdist.torch.DistributedSampler(dataset).seed
report["seed_none_same_as_torch"] = (
    list(popdist.torch.DistributedSampler(dataset)) ==
    list(torch.utils.data.distributed.DistributedSampler(dataset, world, rank, seed=1234)))
report["disagreeing_errors"] = []
for kwargs in ({"num_replicas": world + 1}, {"rank": (rank + 1) % (world + 1)}):
    try:
        popdist.torch.DistributedSampler(dataset, **kwargs)
        report["disagreeing_errors"].append(None)
    except popdist.UsageError as error:
        report["disagreeing_errors"].append(str(error))

# An explicit seed that differs between instances: an error on every instance; the job goes on.
try:
    popdist.torch.DistributedSampler(dataset, seed=100 + rank)
    report["mismatch_error"] = None
except popdist.UsageError as error:
    report["mismatch_error"] = str(error)
after = torch.tensor([1.0])
dist.all_reduce(after)
report["all_reduce_after_error"] = after.item()

# A few DDP steps; every instance reports its weights.
torch.manual_seed(rank)  # different initial weights: DDP must broadcast instance 0's
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.utils.data.TensorDataset(torch.randn(64, 4, generator=torch.Generator().manual_seed(3)),
                                      torch.randn(64, 1, generator=torch.Generator().manual_seed(4)))
for x, y in popdist.torch.DataLoader(data, batch_size=8, shuffle=True):
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
report["weights"] = [p.detach().flatten().tolist() for p in model.parameters()]
report["seconds"] = time.monotonic() - start
write()
dist.destroy_process_group()
if popdist.topology().launcher == "torchrun":  # popdist run exports TORCHELASTIC_RUN_ID too
    # Under torchrun popdist starts no MPI and no thread of its own; torch's gloo threads have been
    # seen (once, in CI under load) to abort the interpreter's exit after everything above was done
    # and written ("terminate called without an active exception"). The checks are in the report;
    # end here without the interpreter's teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
