#include "synchronize_entry.hpp"

#include "synchronize_backend.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

/// _mpi's table once that module is imported (it never goes away), else nullptr.
const SynchronizeBackend* mpi_backend() noexcept {
  static const SynchronizeBackend* found = nullptr;
  if (found != nullptr) return found;
  static PyObject* const name = PyUnicode_InternFromString("popdist._mpi");
  PyObject* module = name != nullptr ? PyImport_GetModule(name) : nullptr;
  if (module == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* capsule = PyObject_GetAttrString(module, kSynchronizeBackendAttribute);
  Py_DECREF(module);
  if (capsule != nullptr) {
    found = static_cast<const SynchronizeBackend*>(PyCapsule_GetPointer(capsule, kSynchronizeBackendCapsule));
    Py_DECREF(capsule);
  }
  PyErr_Clear();
  return found;
}

/// popdist._api._synchronize_without_mpi, looked up once (a strong reference for the process).
PyObject* without_mpi() noexcept {
  static PyObject* function = nullptr;
  if (function == nullptr) {
    PyObject* api = PyImport_ImportModule("popdist._api");
    if (api == nullptr) return nullptr;
    function = PyObject_GetAttrString(api, "_synchronize_without_mpi");
    Py_DECREF(api);
  }
  return function;
}

PyObject* synchronize(PyObject* module, PyObject* const* arguments, Py_ssize_t count, PyObject* keywords) {
  if (const auto* backend = mpi_backend(); backend != nullptr && backend->initialized()) {
    return backend->synchronize(module, arguments, count, keywords);
  }
  PyObject* fallback = without_mpi();
  if (fallback == nullptr) return nullptr;
  return PyObject_Vectorcall(fallback, arguments, static_cast<size_t>(count), keywords);
}

PyMethodDef functions[] = {
    {"synchronize", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(synchronize)),
     METH_FASTCALL | METH_KEYWORDS, kSynchronizeDoc},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_synchronize_entry(py::module_& module) {
  if (PyModule_AddFunctions(module.ptr(), functions) != 0) throw py::error_already_set();
}

}  // namespace popdist::python
