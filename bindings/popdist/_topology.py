"""popdist.Topology: a read-only view of one instance's topology."""

__all__ = ["Topology", "TOPOLOGY_KEYS"]

from ._core import TOPOLOGY_FIELDS

#: The keys of Topology.to_dict(), in order: exactly those of ``popdist topology --json``: the
#: core's table of fields (popdist/topology_fields.hpp), then the device id, provenance, warnings.
TOPOLOGY_KEYS = tuple(TOPOLOGY_FIELDS) + ("device_id", "provenance", "warnings")


class Topology:
    """What one instance knows about the job (read-only).

    Attributes are the keys of :data:`TOPOLOGY_KEYS` (``host_index`` is None when the launcher gives
    no node index and init() has not established it), plus ``ipus_per_replica_set`` (whether
    POPDIST_NUM_IPUS_PER_REPLICA was set) and ``local_device_ordinals``. ``provenance`` maps each
    field to the variable that supplied it (or ``"default"``, ``"derived"``, ``"mpi"``).
    """

    __slots__ = ("_fields",)

    def __init__(self, fields):
        object.__setattr__(self, "_fields", dict(fields))

    def __setattr__(self, name, value):
        raise AttributeError(f"popdist.Topology is read-only (cannot set {name!r})")

    def __delattr__(self, name):
        raise AttributeError(f"popdist.Topology is read-only (cannot delete {name!r})")

    def to_dict(self):
        """The fields as a new dict with the keys of ``popdist topology --json``."""
        f = self._fields
        d = {key: f[key] for key in TOPOLOGY_KEYS}
        d["provenance"] = dict(d["provenance"])
        d["warnings"] = list(d["warnings"])
        return d

    @property
    def ipus_per_replica_set(self):
        """Whether POPDIST_NUM_IPUS_PER_REPLICA was set."""
        return self._fields["ipus_per_replica_set"]

    @property
    def local_device_ordinals(self):
        """The local device ordinals this instance owns (see getLocalDeviceOrdinals())."""
        from . import _core

        return _core.local_device_ordinals(self._fields)

    def __eq__(self, other):
        if not isinstance(other, Topology):
            return NotImplemented
        return self._fields == other._fields

    __hash__ = None  # holds dicts; equality is by value

    def __repr__(self):
        f = self._fields
        shown = ", ".join(f"{key}={f[key]!r}" for key in TOPOLOGY_KEYS if key not in ("provenance", "warnings"))
        warnings = f", warnings={f['warnings']!r}" if f["warnings"] else ""
        return f"popdist.Topology({shown}{warnings})"

    def __str__(self):
        from . import _core

        return _core.describe(self._fields)


def _make_property(key):
    def get(self):
        value = self._fields[key]
        # Hand out copies of the containers so that the object stays read-only.
        if key == "provenance":
            return dict(value)
        if key == "warnings":
            return list(value)
        return value

    get.__name__ = key
    return property(get, doc=f"The topology's {key!r} field.")


for _key in TOPOLOGY_KEYS:
    setattr(Topology, _key, _make_property(_key))
del _key
