"""``popdist.popdist_core``: the module PopDist's Python API lives in (``popdist/popdist_core.so``
in Graphcore's package, whose functions ``popdist`` re-exports). Real scripts call it directly,
e.g. ``popdist.popdist_core.getInstanceIndex()``; here it is the same functions by the same names.
"""

from ._api import (
    checkNumIpusPerReplica,
    execute_on_instances,
    getDeviceId,
    getInstanceIndex,
    getLocalInstanceIndex,
    getNumInstances,
    getNumIpusPerReplica,
    getNumLocalReplicas,
    getNumTotalReplicas,
    getReplicaIndexOffset,
    init,
    isBackendInitialized,
    isPopdistEnvSet,
    isUniformReplicasPerInstance,
    registerCommunicator,
    synchronize,
)

__all__ = [
    "checkNumIpusPerReplica",
    "execute_on_instances",
    "getDeviceId",
    "getInstanceIndex",
    "getLocalInstanceIndex",
    "getNumInstances",
    "getNumIpusPerReplica",
    "getNumLocalReplicas",
    "getNumTotalReplicas",
    "getReplicaIndexOffset",
    "init",
    "isBackendInitialized",
    "isPopdistEnvSet",
    "isUniformReplicasPerInstance",
    "registerCommunicator",
    "synchronize",
]
