"""How popdist.torch and popdist.lightning agree among the instances: one JSON value from each (a
seed, a data set's length, a host index, a rendezvous offer) gathered in instance order, the bound
such an agreement waits for, and the error every instance raises when the instances cannot agree.

Under torchrun there is no MPI job: the agreement goes through torch.distributed's default group,
or, before one exists, through torchrun's agent store. Under every other launcher it goes through
popdist's MPI runtime (popdist._mpi, started if needed), so that a failure anywhere reaches every
instance. Needs torch (popdist.torch imports it before this module).
"""

import datetime
import json
import os

import torch.distributed as dist

from . import _api, _core
from .errors import PopDistError, UsageError

#: Seconds the rendezvous (store start, probes, connection) may take at most, whatever the
#: process group's own timeout: a rendezvous that cannot complete fails this fast.
RENDEZVOUS_TIMEOUT = 60.0

#: What "no limit" (timeout=inf, or anything longer) becomes for torch, which needs a timedelta it
#: can turn into milliseconds and add to a clock in nanoseconds: 50 years fits both, with room.
NO_LIMIT = datetime.timedelta(days=50 * 365)


class RendezvousError(PopDistError, RuntimeError):
    """The instances could not agree a torch.distributed rendezvous; raised on every instance,
    naming the address(es) and port. (Also a RuntimeError, as torch's own rendezvous errors are.)"""


class _Agreements:
    """The agreements' state for the process, in one object."""

    def __init__(self):
        # The bound of popdist's own collectives on the user's behalf: the timeout given to
        # init_process_group/rendezvous/PopdistEnvironment; None: default_bound().
        self.timeout = None
        # Under torchrun, before any process group: a client of torchrun's agent store, and the
        # agreements made through it (the same sequence on every instance).
        self.agent_store = None
        self.agent_store_rounds = 0


_agreements = _Agreements()


def as_timedelta(timeout, call, name="timeout"):
    """``timeout`` (seconds, a timedelta, or None for the default) under popdist's timeout rule:
    positive = that long, inf (or longer than torch can express) = no limit (NO_LIMIT); 0,
    negative or NaN = UsageError naming ``call`` and the argument."""
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        if timeout <= datetime.timedelta(0):
            raise UsageError(f"{call}: {name}={timeout!r} is not a timeout: expected a positive duration, a positive "
                             "number of seconds, or float('inf') for no limit")
        return min(timeout, NO_LIMIT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise UsageError(f"{call}: {name} must be a number of seconds, a datetime.timedelta or None, got "
                         f"{_core.shown_text(repr(timeout))}")
    seconds = _core.checked_timeout(timeout, call)  # the rule: NaN, 0 and negatives are errors
    return NO_LIMIT if seconds >= NO_LIMIT.total_seconds() else datetime.timedelta(seconds=seconds)


def bound_agreements(timeout):
    """From now on the agreements wait at most ``timeout`` (a timedelta; None changes nothing)."""
    if timeout is not None:
        _agreements.timeout = timeout


def default_bound():
    """The bound when the user gave no timeout: POPDIST_SYNC_TIMEOUT when set (synchronize's
    default, read by its rule), else torch's default group timeout (30 min)."""
    seconds = _core.parsed_timeout_variable(os.environ.get("POPDIST_SYNC_TIMEOUT"))
    return dist.default_pg_timeout if seconds is None else datetime.timedelta(seconds=seconds)


def agreement_seconds():
    return (_agreements.timeout or default_bound()).total_seconds()


def under_torchrun():
    # Not TORCHELASTIC_RUN_ID alone: popdist run exports it too (for Lightning) and has no agent
    # store; it says POPDIST_LAUNCHER=openmpi, so popdist's detection names the launcher.
    return _api.topology().launcher == "torchrun"


def allgather_json(value, caller):
    """Every instance's value (JSON-able), in instance order, within agreement_seconds(): through
    popdist's MPI unless this is torchrun, which has no MPI job: then through torch.distributed.
    ``caller`` names the call in a timeout's error."""
    if _api.getNumInstances() == 1:
        return [value]
    if under_torchrun():
        if not dist.is_initialized():
            return _allgather_through_agent_store(value)
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, value)
        return gathered
    return mpi_allgather_json(value, agreement_seconds(), caller)


def mpi_allgather_json(value, timeout, caller):
    """Every instance's value (JSON-able), in instance order, through popdist's MPI runtime
    (initialized if needed); a TimeoutError naming ``caller`` after ``timeout`` seconds."""
    gathered = _mpi().allgather_bytes(json.dumps(value).encode(), timeout=timeout, caller=caller)
    return [json.loads(piece) for piece in gathered]


def mpi_broadcast_json(value, root):
    """Instance ``root``'s value (JSON-able; the others' is ignored) on every instance, through
    popdist's MPI runtime (initialized if needed)."""
    return json.loads(_mpi().broadcast_bytes(json.dumps(value).encode(), root))


def _mpi():
    if not _api.isBackendInitialized():
        _api.init()
    return _core.backend()


def _allgather_through_agent_store(value):
    """Under torchrun before init_process_group() (Lightning creates the group in fit(), after the
    script built its loaders): through the TCPStore torchrun's agent serves on MASTER_ADDR:
    MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True), which torch's own env:// joins the same way.
    Each agreement is one round of keys, under a prefix of the run and its restart."""
    if _agreements.agent_store is None:
        _agreements.agent_store = _agent_store()
    _agreements.agent_store_rounds += 1
    store, rounds = _agreements.agent_store, _agreements.agent_store_rounds
    rank, world = _api.getInstanceIndex(), _api.getNumInstances()
    keys = [f"agree/{rounds}/{i}" for i in range(world)]
    store.set(keys[rank], json.dumps(value))
    try:
        store.wait(keys)
    except Exception as error:  # torch raises DistStoreError on its timeout
        missing = [i for i, key in enumerate(keys) if not store.check([key])]
        raise RendezvousError(f"popdist.torch: instances {missing} did not take part in agreement "
                              f"{rounds} through torchrun's store within {RENDEZVOUS_TIMEOUT:g} s "
                              f"({str(error).strip().splitlines()[0] if str(error).strip() else error})") from error
    return [json.loads(store.get(key)) for key in keys]


def _agent_store():
    """A client of torchrun's agent store, under the prefix of this run and restart."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        raise UsageError("popdist.torch: under torchrun without its agent's store (TORCHELASTIC_USE_AGENT_STORE="
                         f"{os.environ.get('TORCHELASTIC_USE_AGENT_STORE')!r}), call "
                         "popdist.torch.init_process_group() before creating a DistributedSampler or DataLoader "
                         "(the instances agree on the seed through it)")
    address, port = os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT", "29500"))
    client = dist.TCPStore(address, port, None, False, timeout=datetime.timedelta(seconds=RENDEZVOUS_TIMEOUT))
    prefix = f"popdist/{os.environ.get('TORCHELASTIC_RUN_ID', '')}/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}/"
    return dist.PrefixStore(prefix, client)
