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


class Options(_poptorch.Options):
    """``poptorch.Options`` configured for this instance: replicationFactor = its local replicas,
    Distributed.configureProcessId(instance index, number of instances), the job's global replica
    offset and factor, and the device id of its IPUs (``ipus_per_replica`` None or 0: from
    POPDIST_NUM_IPUS_PER_REPLICA)."""

    def __init__(self, ipus_per_replica=None, **kwargs):
        super().__init__(**kwargs)
        self.replicationFactor(getNumLocalReplicas())
        self.Distributed.configureProcessId(getInstanceIndex(), getNumInstances())
        popart_options = getattr(self, "_Popart", None)
        if popart_options is not None:
            popart_options.set("globalReplicaOffset", getReplicaIndexOffset())
            popart_options.set("globalReplicationFactor", getNumTotalReplicas())
        self.useIpuId(getDeviceId(ipus_per_replica or 0))
