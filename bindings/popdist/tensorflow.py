"""TensorFlow (Graphcore's IPU build) helpers, as in Graphcore's PopDist: ``import popdist.tensorflow``.

Importing this module needs TensorFlow; without it the import raises ImportError naming the
missing package.
"""

try:
    import tensorflow as _tensorflow  # noqa: F401 - imported to fail early with a clear message
except ImportError as _error:
    raise ImportError(
        "popdist.tensorflow needs TensorFlow: the 'tensorflow' package (Graphcore's IPU build, from the "
        f"Poplar SDK) is not importable ({_error})",
        name="tensorflow",
    ) from _error

from ._api import getDeviceId, getInstanceIndex, getNumInstances

__all__ = ["set_ipu_config"]


def set_ipu_config(config, ipus_per_replica=None, configure_device=True):
    """Configures an ``ipu.config.IPUConfig`` for this instance: multi-replica distribution with
    process_count = number of instances and process_index = instance index, and (when
    ``configure_device``) select_ipus = this instance's device id. ``ipus_per_replica`` None: from
    POPDIST_NUM_IPUS_PER_REPLICA. Returns ``config``."""
    distribution = config.experimental.multi_replica_distribution
    distribution.process_count = getNumInstances()
    distribution.process_index = getInstanceIndex()
    if configure_device:
        config.select_ipus = getDeviceId(ipus_per_replica or 0)
    return config
