"""popdist: the distribution context of an MPI-, Slurm- or torchrun-launched job, with the API of
Graphcore's PopDist.

``import popdist`` never starts MPI and is cheap: the getters read the topology detected from the
launcher's environment. ``popdist.init()`` starts the MPI backend for synchronize(),
registerCommunicator(), execute_on_instances() and comm(). Framework helpers live in the submodules
``popdist.popart``, ``popdist.poptorch`` and ``popdist.tensorflow`` (import them explicitly).
"""

from . import _api, _core, _getters, popdist_core
from ._api import *  # noqa: F403 - popdist's calls are _api.__all__ (a new call is added there only)
from ._getters import *  # noqa: F403 - PopDist's getters, one per row of the core's field table
from ._topology import TOPOLOGY_KEYS, Topology
from .errors import (
    LaunchError,
    MPIError,
    PopDistEnvironmentError,
    PopDistError,
    RemoteExecutionError,
    TimeoutError,  # noqa: A004 - popdist.TimeoutError is also a builtins.TimeoutError
    TopologyError,
    UsageError,
)

# popdist.TimeoutError is left out of __all__: `from popdist import *` must not shadow the
# builtin TimeoutError (popdist's is a subclass of it, not the other way round).

ReplicaGrouping = _core.ReplicaGrouping
ReplicaGrouping.__module__ = "popdist"
__version__ = _core.__version__

__all__ = [
    "LaunchError",
    "MPIError",
    "PopDistEnvironmentError",
    "PopDistError",
    "RemoteExecutionError",
    "ReplicaGrouping",
    "TOPOLOGY_KEYS",
    "Topology",
    "TopologyError",
    "UsageError",
    *_api.__all__,
    *_getters.__all__,
]
