"""PopDist's topology getters (getInstanceIndex, ...), made from the core's field table.

One function per row of ``popdist/topology_fields.hpp`` that names a getter, with the row's
docstring, so that a field is named once. Each reads the current topology: no MPI, defaults when
not launched. ``__init__.pyi`` types them; tests/python/test_field_getters.py holds the package
and the stubs to the table.
"""

from . import _core


def _popdist_getter(name, field, doc):
    def getter():
        return getattr(_core.topology(), field)

    getter.__name__ = getter.__qualname__ = name
    getter.__doc__ = doc
    return getter


GETTERS = {
    getter: _popdist_getter(getter, field, doc) for field, _kind, getter, doc in _core.TOPOLOGY_FIELD_ROWS if getter
}
globals().update(GETTERS)
__all__ = sorted(GETTERS)
