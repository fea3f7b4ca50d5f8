"""``popdist.popdist_core``: the module PopDist's Python API lives in (``popdist/popdist_core.so``
in Graphcore's package, whose functions ``popdist`` re-exports). Real scripts call it directly,
e.g. ``popdist.popdist_core.getInstanceIndex()``; here it is the same functions by the same names.
"""

from . import _api, _getters

# PopDist's popdist_core functions, the same objects as popdist's (popdist_core.pyi types them):
# its topology getters, made from the core's field table (_getters.py), and these calls.
_CALLS = [
    "checkNumIpusPerReplica",
    "execute_on_instances",
    "getDeviceId",
    "init",
    "isBackendInitialized",
    "registerCommunicator",
    "synchronize",
]
__all__ = sorted([*_getters.GETTERS, *_CALLS])
globals().update(_getters.GETTERS)
globals().update({name: getattr(_api, name) for name in _CALLS})
