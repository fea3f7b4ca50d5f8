"""PopART helpers, as in Graphcore's PopDist: ``import popdist.popart``.

Importing this module needs PopART (the ``popart`` package of the Poplar SDK); without it the
import raises ImportError naming the missing package.
"""

try:
    import popart as _popart
except ImportError as _error:
    raise ImportError(
        f"popdist.popart needs PopART: the 'popart' package (from the Poplar SDK) is not importable ({_error})",
        name="popart",
    ) from _error

from ._api import getDeviceId, getNumLocalReplicas, getNumTotalReplicas, getReplicaIndexOffset
from .errors import PopDistError

__all__ = ["configureSessionOptions", "getDevice"]


def configureSessionOptions(opts):
    """Configures ``popart.SessionOptions`` for this instance's part of the job: its local replicas
    (replicatedGraphCount) inside the job's global replication (globalReplicationFactor, starting
    at globalReplicaOffset)."""
    opts.enableDistributedReplicatedGraphs = True
    opts.globalReplicaOffset = getReplicaIndexOffset()
    opts.globalReplicationFactor = getNumTotalReplicas()
    opts.replicatedGraphCount = getNumLocalReplicas()
    opts.enableReplicatedGraphs = True
    return opts


def getDevice(ipusPerReplica=0, connectionType=None):
    """Acquires this instance's multi-IPU device (id from popdist.getDeviceId(ipusPerReplica);
    0 or None: from POPDIST_NUM_IPUS_PER_REPLICA). ``connectionType`` defaults to
    ``popart.DeviceConnectionType.Always``."""
    if connectionType is None:
        connectionType = _popart.DeviceConnectionType.Always
    device_id = getDeviceId(ipusPerReplica or 0)
    device = _popart.DeviceManager().acquireDeviceById(device_id, connectionType=connectionType)
    if device is None:
        raise PopDistError(f"popdist.popart.getDevice: could not acquire device {device_id} (is it free and attached?)")
    return device
