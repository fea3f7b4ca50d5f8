#pragma once
// How popdist._core (the one core under Python, which never loads libmpi) reaches popdist._mpi
// (the MPI runtime and registry): _mpi publishes this table of plain C function pointers in a
// capsule when it is imported, and _core finds it there (both modules are built from this
// header, so they agree on its layout). Nothing is rebound: the table is constant for the life of
// the process. Every entry reports failure as a Python exception (nullptr): no C++ exception
// crosses the table.

#include <Python.h>

namespace popdist::python {

struct MpiBackend {
  /// popdist::is_initialized() of _mpi's copy of the library.
  bool (*initialized)() noexcept;
  /// synchronize(communicator_id='', participants=(), timeout=None) in METH_FASTCALL |
  /// METH_KEYWORDS form (the module argument is unused).
  PyObject* (*synchronize)(PyObject* module, PyObject* const* arguments, Py_ssize_t count, PyObject* keywords);
  /// execute_on_instances(instances, func, args: tuple, kwargs: dict) in METH_FASTCALL form.
  PyObject* (*execute_on_instances)(PyObject* module, PyObject* const* arguments, Py_ssize_t count);
};

/// The capsule's attribute of popdist._mpi, and its name.
inline constexpr const char* kMpiBackendAttribute = "_backend";
inline constexpr const char* kMpiBackendCapsule = "popdist._mpi._backend";

/// The text signature and docstring both modules give synchronize.
inline constexpr const char* kSynchronizeDoc =
    "synchronize($module, /, communicator_id='', participants=(), timeout=None)\n--\n\n"
    "A barrier.\n\n"
    "No arguments: over the current scope (all instances, or the set of the enclosing\n"
    "execute_on_instances). With ``communicator_id`` or ``participants``: over that set, created on\n"
    "first use. Instances that are not members return at once (so SPMD scripts may call it\n"
    "unconditionally). With ``timeout`` (seconds; default POPDIST_SYNC_TIMEOUT) the whole call is\n"
    "bounded and :class:`popdist.TimeoutError` names the instances that did not arrive.";

/// _mpi's table once that module is imported (it never goes away), else nullptr. Never imports.
[[nodiscard]] const MpiBackend* loaded_backend() noexcept;

/// popdist._mpi, imported on first use (this is where libmpi gets loaded); throws
/// py::error_already_set when the import fails.
[[nodiscard]] PyObject* backend_module();

/// backend_module()'s table.
[[nodiscard]] const MpiBackend& backend();

/// True between init() and finalize(), without importing _mpi.
[[nodiscard]] inline bool backend_initialized() noexcept {
  const auto* table = loaded_backend();
  return table != nullptr && table->initialized();
}

}  // namespace popdist::python
