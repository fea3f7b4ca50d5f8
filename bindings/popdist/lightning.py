"""Lightning helpers: ``import popdist.lightning``, used as in::

    from popdist.lightning import PopdistEnvironment, trainer_kwargs
    trainer = lightning.Trainer(accelerator="cpu", strategy="ddp", plugins=[PopdistEnvironment()],
                                **trainer_kwargs())

:class:`PopdistEnvironment` is a ``ClusterEnvironment`` of the installed ``lightning`` package (or of
``pytorch_lightning`` when that is what is installed): ranks from popdist's context under every
launcher popdist reads (``popdist run`` and plain ``mpirun`` set no ``RANK``), the processes are
created by the launcher, and the main address and port are agreed as in
``popdist.torch.init_process_group()`` (instance 0's store is kept alive and Lightning's ``env://``
rendezvous joins it). Without Lightning the import raises ImportError naming ``lightning``.
"""

try:
    from lightning.fabric.plugins.environments import ClusterEnvironment as _ClusterEnvironment
    from lightning.fabric.utilities import rank_zero as _fabric_rank_zero

    _rank_zero_modules = [_fabric_rank_zero]
    try:
        from lightning.pytorch.utilities import rank_zero as _pytorch_rank_zero

        _rank_zero_modules.append(_pytorch_rank_zero)
    except ImportError:
        pass
except ImportError as _lightning_error:
    try:
        from lightning_fabric.plugins.environments import ClusterEnvironment as _ClusterEnvironment
        from pytorch_lightning.utilities import rank_zero as _pytorch_rank_zero

        _rank_zero_modules = [_pytorch_rank_zero]
    except ImportError:
        raise ImportError(
            "popdist.lightning needs Lightning: neither 'lightning' nor 'pytorch_lightning' is importable "
            f"({_lightning_error}); install it with `pip install lightning`",
            name="lightning",
        ) from _lightning_error

import os as _os
import warnings as _warnings

from . import torch as _popdist_torch  # noqa: F401 - needs torch: its ImportError names it
from . import _agreement, _api, _lifecycle, _torch_rendezvous
from .errors import UsageError

__all__ = ["PopdistEnvironment", "trainer_kwargs"]


def _host_layout():
    """(instances on each host, in host order) from one allgather of host indices; needs init()
    with several instances (MPI is the ground truth for "same host")."""
    if _api.getNumInstances() == 1:
        return [1]
    if not _api.isBackendInitialized():
        _api.init()  # before reading the host index: MPI's shared-memory split gives it
    hosts = _agreement.allgather_json(_api.topology().host_index, caller="popdist.lightning.trainer_kwargs")
    counts = {}
    for h in hosts:
        counts[h] = counts.get(h, 0) + 1
    return [counts[h] for h in sorted(counts, key=lambda h: (h is None, h))]


def trainer_kwargs():
    """``{"devices": instances per host, "num_nodes": hosts}`` for ``lightning.Trainer``, matching
    this job. Lightning's ranks need the same number of instances on every host: an uneven layout
    is a UsageError naming it. (A collective under several instances: call it on every instance.)"""
    if _agreement.under_torchrun():
        local = int(_os.environ.get("LOCAL_WORLD_SIZE", "1"))
        return {"devices": local, "num_nodes": _api.getNumInstances() // local}
    layout = _host_layout()
    if len(set(layout)) != 1:
        raise UsageError(f"popdist.lightning.trainer_kwargs(): the hosts run {layout} instances; Lightning's ddp "
                         "needs the same number of instances on every host")
    return {"devices": layout[0], "num_nodes": len(layout)}


class PopdistEnvironment(_ClusterEnvironment):
    """Lightning's view of a popdist job: global rank = instance index, world size = number of
    instances, local rank = local instance index, node rank = host index; processes are created
    by the launcher (``popdist run``, ``mpirun``, ``srun``, torchrun).

    ``timeout`` (seconds or a timedelta) bounds the rendezvous of main_address/main_port (default
    popdist.torch.RENDEZVOUS_TIMEOUT seconds)."""

    def __init__(self, timeout=None):
        super().__init__()
        timeout = _agreement.as_timedelta(timeout, "popdist.lightning.PopdistEnvironment")
        _agreement.bound_agreements(timeout)
        self._rendezvous_seconds = timeout.total_seconds() if timeout else _agreement.RENDEZVOUS_TIMEOUT
        self._address = None
        self._port = None
        self._store = None  # instance 0's holds the server that Lightning's env:// rendezvous joins
        self._warned_world_size = False
        # Lightning creates the process group; its gloo threads must still be gone before the
        # interpreter finalizes (popdist.torch's teardown at exit).
        _lifecycle.arrange_torch_release()
        # Lightning decides its rank-zero-only logging from RANK/LOCAL_RANK/SLURM_PROCID at import,
        # which `popdist run` and mpirun do not set: without this, every instance would log as rank 0
        # until the strategy sets the rank.
        for module in _rank_zero_modules:
            module.rank_zero_only.rank = _api.getInstanceIndex()

    @property
    def creates_processes_externally(self):
        return True

    @staticmethod
    def detect():
        """True when a launcher or PopRun variables describe this process (isPopdistEnvSet())."""
        return _api.isPopdistEnvSet()

    def _agree(self):
        if self._address is not None:
            return
        if _agreement.under_torchrun():
            self._address = _os.environ.get("MASTER_ADDR", "127.0.0.1")
            self._port = int(_os.environ.get("MASTER_PORT", "29500"))
            return
        world = _api.getNumInstances()
        if world > 1 and not _api.isBackendInitialized():
            _api.init()
        self._store, self._address, self._port = _torch_rendezvous.agree(world, self._rendezvous_seconds)

    @property
    def main_address(self):
        self._agree()
        return self._address

    @property
    def main_port(self):
        self._agree()
        return self._port

    def world_size(self):
        return _api.getNumInstances()

    def set_world_size(self, size):
        # As Lightning's own environments (torchelastic, SLURM, MPI): the launcher decided the world
        # size, and Lightning's devices x num_nodes is ignored. A different value still deserves a
        # word: Lightning sizes the samplers it makes itself from it.
        if size != _api.getNumInstances() and not self._warned_world_size:
            self._warned_world_size = True
            _warnings.warn(f"popdist.lightning: Lightning asks for {size} processes (devices x num_nodes) but the job "
                           f"has {_api.getNumInstances()} instances; ignored (the job decides). Pass "
                           "**popdist.lightning.trainer_kwargs() to the Trainer so that its samplers match",
                           stacklevel=2)

    def global_rank(self):
        return _api.getInstanceIndex()

    def set_global_rank(self, rank):
        # Lightning computes node_rank x devices + local_rank; popdist's instance index is the truth.
        pass

    def local_rank(self):
        return _api.getLocalInstanceIndex()

    def node_rank(self):
        host = _api.topology().host_index
        if host is None and _api.getNumInstances() > 1 and not _api.isBackendInitialized():
            _api.init()  # the MPI launchers give no node index: MPI's shared-memory split does
            host = _api.topology().host_index
        return host or 0

    def validate_settings(self, num_devices, num_nodes):
        # Lightning's check of its launch settings (as SLURMEnvironment's): a mismatch is an error.
        if num_devices * num_nodes != _api.getNumInstances():
            raise UsageError(f"popdist.lightning: the Trainer asks for {num_devices * num_nodes} processes (devices "
                             f"{num_devices} x num_nodes {num_nodes}) but the job has {_api.getNumInstances()} "
                             "instances; pass **popdist.lightning.trainer_kwargs() to the Trainer")

    def teardown(self):
        self._store = None
