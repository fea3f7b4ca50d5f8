"""PyTorch helpers: ``import popdist.torch``, used as in::

    popdist.torch.init_process_group()          # torch.distributed's default group: rank = instance
    model = DDP(model.to(popdist.torch.device()))
    loader = popdist.torch.DataLoader(dataset, batch_size=32, shuffle=True)   # my shard, agreed seed
    for epoch in range(epochs):
        loader.set_epoch(epoch)

Importing this module needs PyTorch; without it the import raises ImportError naming ``torch``.
``import popdist`` alone never imports torch.

The rendezvous: under torchrun, its own variables (``env://``) as they are. Under every other
launcher popdist reads, popdist's MPI runtime agrees it: instance 0 starts the job's store, which
admits only clients that know a secret sent over MPI (_job_store.py; on ``MASTER_PORT`` when set,
else a free port) and offers addresses -- ``MASTER_ADDR`` when set,
127.0.0.1 when every instance is on its host, else its interfaces' IPv4 addresses, loopback
first -- and every instance probes them (a TCP connect, then the store's handshake, so that a
peer's own loopback is never taken for instance 0). The first address every
instance reaches wins. Any failure (port taken, address unreachable) is agreed through MPI too, so
every instance raises the same :class:`RendezvousError` naming the address and port, within the
timeout. A single unlaunched process is a world of one and needs no MPI.
"""

try:
    import torch as _torch
    import torch.distributed as _dist
    import torch.utils.data as _data
    from torch.utils.data.distributed import DistributedSampler as _TorchDistributedSampler
except ImportError as _error:
    raise ImportError(
        f"popdist.torch needs PyTorch: the 'torch' package is not importable ({_error}); "
        "install it with `pip install torch`",
        name="torch",
    ) from _error

from . import _agreement, _api, _core, _lifecycle, _torch_rendezvous as _rendezvous
from .errors import UsageError

__all__ = ["DataLoader", "DistributedSampler", "RendezvousError", "device", "init_process_group", "rendezvous"]

RendezvousError = _agreement.RendezvousError
RENDEZVOUS_TIMEOUT = _agreement.RENDEZVOUS_TIMEOUT  # the bound of each rendezvous step
NO_LIMIT = _agreement.NO_LIMIT  # what timeout=inf becomes


class _TorchState:
    """popdist.torch's state for the process, in one object (its release at exit is
    popdist._lifecycle's)."""

    def __init__(self):
        # The job's store behind the default group: instance 0's holds the server, keep it alive.
        self.store = None

    def forget_store(self):
        # At exit the server keeps serving until the process ends: a peer may still be tearing down.
        self.store = None

    def close_store(self):
        """Closes the store of an earlier group (its connections, and instance 0's server)."""
        store, self.store = self.store, None
        if store is None:
            return
        store.close()
        server = getattr(store, "server", None)
        if server is not None:
            server.close()


_state = _TorchState()


def _checked_backend(backend, call):
    """``backend`` as torch.distributed takes it (None: nccl with CUDA, else gloo); a name torch
    does not have here is a UsageError naming it and the ones it has (not torch's AssertionError)."""
    if backend is None:
        return _default_backend()
    if not isinstance(backend, str):
        raise UsageError(f"{call}: backend must be a str such as 'gloo' or None, got {_core.shown_text(repr(backend))}")
    # torch also takes "cpu:gloo,cuda:nccl": every named backend must exist.
    names = [piece.split(":")[-1].strip().lower() for piece in backend.split(",")]
    missing = [n for n in names if not n or not _backend_available(n)]
    if missing:
        known = [n for n in ("gloo", "nccl", "mpi", "ucc", "xccl") if _backend_available(n)]
        raise UsageError(f"{call}: backend={_core.shown_text(repr(backend))} is not a torch.distributed backend available "
                         f"here (available: {', '.join(known) or 'none'})")
    return backend


def _backend_available(name):
    try:
        return bool(_dist.is_backend_available(name))
    except Exception:  # noqa: BLE001 - an odd name torch cannot even look up is not available
        return False


def _default_backend():
    return "nccl" if _torch.cuda.is_available() else "gloo"


def rendezvous(timeout=None):
    """``(store, rank, world_size)`` for this job without creating a process group: a TCPStore
    agreed as described in the module's docstring (a HashStore in a world of one). Under torchrun
    use ``env://`` instead (this raises UsageError there)."""
    if _agreement.under_torchrun():
        raise UsageError("popdist.torch.rendezvous(): under torchrun use its env:// rendezvous "
                         "(popdist.torch.init_process_group() does)")
    given = _agreement.as_timedelta(timeout, "popdist.torch.rendezvous")
    _agreement.bound_agreements(given)
    timeout = given or _agreement.default_bound()
    rank, world = _api.getInstanceIndex(), _api.getNumInstances()
    if world == 1:
        return _dist.HashStore(), 0, 1
    if not _api.isBackendInitialized():
        _api.init()
    store = _rendezvous.agree_store(world, timeout, min(timeout.total_seconds(), _agreement.RENDEZVOUS_TIMEOUT))
    return store, rank, world


def init_process_group(backend=None, timeout=None, **kwargs):
    """Creates torch.distributed's default process group from popdist's context: rank = instance
    index, world size = number of instances. ``backend=None``: "nccl" when CUDA is available, else
    "gloo". ``timeout`` (seconds or a timedelta; None: torch's default) is the group's; the
    rendezvous itself is bounded by min(timeout, RENDEZVOUS_TIMEOUT). Other keyword arguments go to
    ``torch.distributed.init_process_group``. Returns the default group.

    Raises :class:`RendezvousError` (on every instance, naming address and port) when the
    rendezvous cannot complete, UsageError when a default group exists with another rank or size.
    """
    for name in ("rank", "world_size", "store", "init_method"):
        if name in kwargs:
            raise UsageError(f"popdist.torch.init_process_group(): {name}={kwargs[name]!r} is decided by popdist "
                             "(rank = instance index, world size = number of instances); do not pass it")
    call = "popdist.torch.init_process_group"
    timeout = _agreement.as_timedelta(timeout, call)
    _agreement.bound_agreements(timeout)
    backend = _checked_backend(backend, call)
    rank, world = _api.getInstanceIndex(), _api.getNumInstances()
    if _dist.is_initialized():
        if (_dist.get_rank(), _dist.get_world_size()) != (rank, world):
            raise UsageError(f"popdist.torch.init_process_group(): torch.distributed is already initialized as rank "
                             f"{_dist.get_rank()} of {_dist.get_world_size()}, but popdist says this is instance "
                             f"{rank} of {world}")
        return _dist.group.WORLD
    if timeout is not None:
        kwargs["timeout"] = timeout
    if _agreement.under_torchrun():
        # torchrun's agent already rendezvoused: its MASTER_ADDR/PORT, RANK and WORLD_SIZE as they are.
        _dist.init_process_group(backend, init_method="env://", **kwargs)
    else:
        _state.close_store()  # a group destroyed since: its server would hold MASTER_PORT
        _state.store, rank, world = rendezvous(timeout)
        _dist.init_process_group(backend, store=_state.store, rank=rank, world_size=world, **kwargs)
    # The group's worker threads must be gone before the interpreter finalizes (_lifecycle.py says
    # why): the release runs from Python's atexit, while the interpreter is whole.
    _lifecycle.arrange_torch_release(_state.forget_store)
    return _dist.group.WORLD


def device():
    """This instance's ``torch.device``: ``cuda:<its first local device ordinal>`` (the ordinals of
    ``popdist.getLocalDeviceOrdinals()``) when CUDA is available, else cpu."""
    if not _torch.cuda.is_available():
        return _torch.device("cpu")
    ordinals = _api.getLocalDeviceOrdinals()
    available = _torch.cuda.device_count()
    if max(ordinals) >= available:
        raise UsageError(f"popdist.torch.device(): this instance owns local device ordinals {list(ordinals)} "
                         f"(local instance {_api.getLocalInstanceIndex()} x {len(ordinals)} devices), but "
                         f"torch.cuda.device_count() is {available}")
    return _torch.device("cuda", ordinals[0])


class DistributedSampler(_TorchDistributedSampler):
    """torch's DistributedSampler over popdist's instances (rank = instance index, replicas =
    number of instances), with the seed agreed by every instance. torch's signature:
    ``(dataset, num_replicas=None, rank=None, shuffle=True, seed=None, drop_last=False)``,
    positional or keyword.

    ``num_replicas`` and ``rank`` may be given (as code written for torch does): they must agree
    with popdist's context, else UsageError naming both. Each instance reads a different subset;
    together they cover the data set once per epoch. Without ``drop_last`` the index list is
    padded by repeating its start until it divides evenly (a few samples are read twice per epoch);
    with ``drop_last`` the tail is dropped instead. Either way every instance yields the same
    number of samples, and the same indices as torch's sampler with the same arguments.
    ``set_epoch(e)`` reshuffles, identically everywhere. ``seed=None``: instance 0's
    ``torch.initial_seed()`` (the seed of torch's RNG: ``torch.manual_seed(s)`` or
    ``seed_everything(s)`` make it ``s``; torch's fixed default seed otherwise, so the order is
    reproducible), used by every instance. An explicit seed must be the same everywhere, or every
    instance raises UsageError naming the instances and their seeds (one collective at
    construction, so the job stays usable).
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=None, drop_last=False):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
            raise UsageError(f"popdist.torch.DistributedSampler: seed={seed!r}: expected None or an integer in [0, 2**63)")
        rank_, world = _api.getInstanceIndex(), _api.getNumInstances()
        _check_given("num_replicas", num_replicas, world, f"the job has {world} instance(s)")
        _check_given("rank", rank, rank_, f"this is instance {rank_} of {world}")
        length = len(dataset)
        # One collective agrees on everything: the seed (instance 0's torch seed, or everyone's own),
        # and the data set's length (different lengths would give different shards and batch counts).
        # The seed is read, not drawn: torch's RNG streams stay as they would be without popdist.
        draw = _torch.initial_seed() % 2**63 if seed is None and rank_ == 0 else None
        gathered = _agreement.allgather_json({"seed": seed, "draw": draw, "length": length},
                                             caller="popdist.torch.DistributedSampler")
        _check_agreement(gathered, seed)
        agreed = gathered[0]["draw"] if seed is None else seed
        super().__init__(dataset, num_replicas=world, rank=rank_, shuffle=shuffle, seed=agreed, drop_last=drop_last)


def _check_given(name, given, actual, context):
    """A value passed in torch's signature must be popdist's (a local check: every instance that
    disagrees raises before any collective)."""
    if given is None:
        return
    if isinstance(given, bool) or not isinstance(given, int) or given != actual:
        raise UsageError(f"popdist.torch.DistributedSampler: {name}={given!r} disagrees with popdist's context "
                         f"({name} {actual}: {context}); pass {name}={actual} or leave it out")


def _check_agreement(gathered, seed):
    explicit = [g["seed"] for g in gathered]
    if len(set(explicit)) > 1:
        listing = ", ".join(f"instance {i}: seed={s!r}" for i, s in enumerate(explicit))
        raise UsageError(f"popdist.torch.DistributedSampler: the instances passed different seeds ({listing}); pass "
                         "the same seed everywhere, or seed=None to let instance 0 choose one for all")
    lengths = [g["length"] for g in gathered]
    if len(set(lengths)) > 1:
        listing = ", ".join(f"instance {i}: {n}" for i, n in enumerate(lengths))
        raise UsageError(f"popdist.torch.DistributedSampler: the data set has a different length on different "
                         f"instances ({listing}); every instance must see the same data set")


class DataLoader(_data.DataLoader):
    """torch's DataLoader reading this instance's shard through :class:`DistributedSampler`
    (reachable as ``.sampler``). ``drop_last`` applies to both: the sampler drops the tail that does
    not divide among the instances, the loader an incomplete last batch. ``set_epoch(e)`` forwards
    to the sampler. Other keyword arguments go to torch's DataLoader.

    ``sampler=`` or ``batch_sampler=`` is refused (UsageError) unless it is already sharded over
    popdist's instances: a torch ``DistributedSampler`` (popdist's, or one Lightning makes) with
    this job's ``num_replicas`` and ``rank``, or a batch sampler over one. Any other sampler would
    make every instance read the whole data set. Lightning rebuilds a loader it was given by calling
    its class again with the same arguments plus its sharded ``sampler=``: that is accepted and used
    as is (it decides the order: ``shuffle`` and ``seed`` are ignored)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, seed=None, drop_last=False, **kwargs):
        if kwargs.get("sampler") is not None or kwargs.get("batch_sampler") is not None:
            _check_sharded(kwargs.get("sampler"), kwargs.get("batch_sampler"))
            # The sampler decides the order (torch refuses shuffle=True beside one; Lightning passes both).
            super().__init__(dataset, batch_size=batch_size, drop_last=drop_last, **kwargs)
            return
        kwargs.pop("sampler", None)
        kwargs.pop("batch_sampler", None)
        sampler = DistributedSampler(dataset, shuffle=shuffle, seed=seed, drop_last=drop_last)
        super().__init__(dataset, batch_size=batch_size, sampler=sampler, drop_last=drop_last, **kwargs)

    def set_epoch(self, epoch):
        """Reshuffles for ``epoch`` (the same order on every instance)."""
        if hasattr(self.sampler, "set_epoch"):
            self.sampler.set_epoch(epoch)


def _check_sharded(sampler, batch_sampler):
    """A sampler given to DataLoader must already shard over popdist's instances (see DataLoader)."""
    name, given = ("sampler", sampler) if sampler is not None else ("batch_sampler", batch_sampler)
    inner = sampler if sampler is not None else getattr(batch_sampler, "sampler", None)
    world, rank = _api.getNumInstances(), _api.getInstanceIndex()
    if isinstance(inner, _TorchDistributedSampler) and (inner.num_replicas, inner.rank) == (world, rank):
        return
    if isinstance(inner, _TorchDistributedSampler):
        why = (f"it shards for rank {inner.rank} of {inner.num_replicas}, but this is instance {rank} of {world}")
    else:
        why = ("it is not a DistributedSampler over popdist's instances, so every instance would read the whole "
               "data set")
    raise UsageError(f"popdist.torch.DataLoader: {name}={_core.shown_text(repr(given))} is refused: {why}. "
                     "popdist.torch.DataLoader shards with its own sampler: leave sampler/batch_sampler out (pass "
                     "shuffle= and seed= instead), or use torch.utils.data.DataLoader with your sampler and shard "
                     "it yourself (popdist.torch.DistributedSampler shards a data set)")
