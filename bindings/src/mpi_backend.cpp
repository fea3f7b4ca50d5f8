// _core's side of mpi_backend.hpp: finding popdist._mpi's table, and importing _mpi when a call
// needs MPI.
#include "mpi_backend.hpp"

#include <pybind11/pybind11.h>

#include <stdexcept>

namespace py = pybind11;

namespace popdist::python {
namespace {

const MpiBackend* table_of(PyObject* module) noexcept {
  PyObject* capsule = PyObject_GetAttrString(module, kMpiBackendAttribute);
  const MpiBackend* table = nullptr;
  if (capsule != nullptr) {
    table = static_cast<const MpiBackend*>(PyCapsule_GetPointer(capsule, kMpiBackendCapsule));
    Py_DECREF(capsule);
  }
  PyErr_Clear();
  return table;
}

const MpiBackend* g_table = nullptr;  // once found, for the life of the process
PyObject* g_module = nullptr;         // a strong reference, never released (as sys.modules' own)

}  // namespace

const MpiBackend* loaded_backend() noexcept {
  if (g_table != nullptr) return g_table;
  static PyObject* const name = PyUnicode_InternFromString("popdist._mpi");
  PyObject* module = name != nullptr ? PyImport_GetModule(name) : nullptr;
  if (module == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  g_table = table_of(module);
  if (g_table != nullptr && g_module == nullptr) {
    g_module = module;  // keeps the reference
  } else {
    Py_DECREF(module);
  }
  return g_table;
}

PyObject* backend_module() {
  if (loaded_backend() == nullptr) {
    PyObject* module = PyImport_ImportModule("popdist._mpi");
    if (module == nullptr) throw py::error_already_set();
    Py_DECREF(module);
    if (loaded_backend() == nullptr) {
      throw std::runtime_error("popdist._mpi has no backend table: the extension modules come from different builds");
    }
  }
  return g_module;
}

const MpiBackend& backend() {
  (void)backend_module();
  return *g_table;
}

}  // namespace popdist::python
