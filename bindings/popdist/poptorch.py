"""PopTorch helpers, as in Graphcore's PopDist: ``import popdist.poptorch``.

Importing this module needs PopTorch (``poptorch`` from the Poplar SDK); without it the import
raises ImportError naming the missing package.
"""

try:
    import poptorch as _poptorch
except ImportError as _error:
    raise ImportError(
        f"popdist.poptorch needs PopTorch: the 'poptorch' package (from the Poplar SDK) is not importable ({_error})",
        name="poptorch",
    ) from _error

from ._api import (
    getDeviceId,
    getInstanceIndex,
    getNumInstances,
    getNumLocalReplicas,
    getNumTotalReplicas,
    getReplicaIndexOffset,
)

__all__ = ["Options"]


def _refuse(name):
    # PopDist's wording, which PopTorch's own tests match: the value comes from PopRun (here:
    # POPDIST_* and the launcher), and a script setting it would silently disagree with the job.
    raise RuntimeError(
        f"Cannot call `{name}` with popdist.poptorch.Options: the launcher (PopRun / popdist run) sets it; "
        "use poptorch.Options to set it yourself"
    )


class _DistributedSetByLauncher:
    """``Options.Distributed`` once popdist has configured it: reads (processId, numProcesses, ...)
    go to PopTorch's own object; the setters PopDist refuses raise RuntimeError."""

    def __init__(self, distributed):
        object.__setattr__(self, "_distributed", distributed)

    def __getattr__(self, name):
        if name == "_distributed":  # copy/pickle create the object without __init__
            raise AttributeError(name)
        return getattr(self._distributed, name)

    def __setattr__(self, name, value):
        setattr(self._distributed, name, value)

    def configureProcessId(self, *args, **kwargs):  # noqa: N802 - PopTorch's name
        _refuse("Distributed.configureProcessId")

    def disable(self, *args, **kwargs):
        _refuse("Distributed.disable")

    def setEnvVarNames(self, *args, **kwargs):  # noqa: N802 - PopTorch's name
        _refuse("Distributed.setEnvVarNames")


class Options(_poptorch.Options):
    """``poptorch.Options`` configured for this instance: replicationFactor = its local replicas,
    Distributed.configureProcessId(instance index, number of instances), the job's global replica
    offset and factor, and the device id of its IPUs (``ipus_per_replica`` None or 0: from
    POPDIST_NUM_IPUS_PER_REPLICA).

    As in PopDist, what the launcher decides cannot be overridden afterwards:
    ``replicationFactor``, ``useIpuId`` and ``Distributed.configureProcessId`` / ``disable`` /
    ``setEnvVarNames`` raise RuntimeError ("Cannot call `replicationFactor` with
    popdist.poptorch.Options"). Everything else is PopTorch's.
    """

    def __init__(self, ipus_per_replica=None, **kwargs):
        super().__init__(**kwargs)
        super().replicationFactor(getNumLocalReplicas())
        self.Distributed.configureProcessId(getInstanceIndex(), getNumInstances())
        popart_options = getattr(self, "_Popart", None)
        if popart_options is not None:
            popart_options.set("globalReplicaOffset", getReplicaIndexOffset())
            popart_options.set("globalReplicationFactor", getNumTotalReplicas())
        super().useIpuId(getDeviceId(ipus_per_replica or 0))
        # PopTorch's Options.Distributed is a property returning self._distributed.
        if "_distributed" in vars(self):
            self._distributed = _DistributedSetByLauncher(self._distributed)

    def replicationFactor(self, *args, **kwargs):  # noqa: N802 - PopTorch's name
        _refuse("replicationFactor")

    def useIpuId(self, *args, **kwargs):  # noqa: N802 - PopTorch's name
        _refuse("useIpuId")
