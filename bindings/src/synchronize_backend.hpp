#pragma once
// How popdist.synchronize (a function of popdist._core, which never loads libmpi) reaches the one
// binding of popdist::synchronize in popdist._mpi: _mpi publishes this table in a capsule when it
// is imported, and _core finds it there (both modules are built from this header, so they agree
// on its layout). Nothing is rebound: the table is constant for the life of the process.

#include <Python.h>

namespace popdist::python {

struct SynchronizeBackend {
  /// popdist::is_initialized() of _mpi's copy of the library.
  bool (*initialized)() noexcept;
  /// The binding: synchronize(communicator_id='', participants=(), timeout=None) in METH_FASTCALL |
  /// METH_KEYWORDS form (the module argument is unused). Raises and returns nullptr on failure.
  PyObject* (*synchronize)(PyObject* module, PyObject* const* arguments, Py_ssize_t count, PyObject* keywords);
};

/// The capsule's attribute of popdist._mpi, and its name.
inline constexpr const char* kSynchronizeBackendAttribute = "_synchronize_backend";
inline constexpr const char* kSynchronizeBackendCapsule = "popdist._mpi._synchronize_backend";

/// The text signature and docstring both modules give synchronize.
inline constexpr const char* kSynchronizeDoc =
    "synchronize($module, /, communicator_id='', participants=(), timeout=None)\n--\n\n"
    "A barrier.\n\n"
    "No arguments: over the current scope (all instances, or the set of the enclosing\n"
    "execute_on_instances). With ``communicator_id`` or ``participants``: over that set, created on\n"
    "first use. Instances that are not members return at once (so SPMD scripts may call it\n"
    "unconditionally). With ``timeout`` (seconds; default POPDIST_SYNC_TIMEOUT) the whole call is\n"
    "bounded and :class:`popdist.TimeoutError` names the instances that did not arrive.";

}  // namespace popdist::python
