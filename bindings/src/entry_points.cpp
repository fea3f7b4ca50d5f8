#include "entry_points.hpp"

#include <string>

#include "errors.hpp"
#include "mpi_backend.hpp"
#include "python_arguments.hpp"
#include "single_instance.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

// popdist.synchronize. After init() the arguments go, untouched, to _mpi's binding, which converts
// them and waits in C++ without a Python frame. Plain CPython functions rather than pybind11 ones,
// here and in _mpi: pybind11's dispatcher (argument loading, overload resolution) costs a visible
// share of a barrier as cheap as mpi4py's one-rank Barrier(), the benchmark's baseline
// (tests/bench/README.md).
PyObject* synchronize(PyObject* module, PyObject* const* arguments, Py_ssize_t count, PyObject* keywords) {
  if (const auto* table = loaded_backend(); table != nullptr && table->initialized()) {
    return table->synchronize(module, arguments, count, keywords);
  }
  try {
    PyObject* values[3] = {nullptr, nullptr, nullptr};
    if (!bind_synchronize_arguments(arguments, count, keywords, values)) return nullptr;
    const std::string name = values[0] != nullptr ? communicator_id_of(values[0]) : std::string();
    if (single_uninitialized()) {
      synchronize_locally(values[0], name, values[1], values[2]);
      Py_RETURN_NONE;
    }
    return backend().synchronize(module, arguments, count, keywords);
  } catch (...) {
    return raise_current_exception();
  }
}

// execute_on_instances(instances, func, args: tuple, kwargs: dict), positional only: the Python
// layer packs *args and **kwargs. The MPI binding reads and checks the arguments itself.
PyObject* execute_on_instances(PyObject* module, PyObject* const* arguments, Py_ssize_t count) {
  if (const auto* table = loaded_backend(); table != nullptr && table->initialized()) {
    return table->execute_on_instances(module, arguments, count);
  }
  if (count != 4 || !PyTuple_Check(arguments[2]) || !PyDict_Check(arguments[3])) {
    PyErr_SetString(PyExc_TypeError, "execute_on_instances(instances, func, args: tuple, kwargs: dict)");
    return nullptr;
  }
  try {
    if (single_uninitialized()) {
      return execute_locally(arguments[0], arguments[1], arguments[2], arguments[3]).release().ptr();
    }
    return backend().execute_on_instances(module, arguments, count);
  } catch (...) {
    return raise_current_exception();
  }
}

PyMethodDef functions[] = {
    {"synchronize", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(synchronize)),
     METH_FASTCALL | METH_KEYWORDS, kSynchronizeDoc},
    {"execute_on_instances", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(execute_on_instances)),
     METH_FASTCALL,
     "execute_on_instances(instances, func, args, kwargs)\n--\n\n"
     "Runs func(*args, **kwargs) on the members of instances (scoped to them); None elsewhere."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_entry_points(py::module_& module) {
  if (PyModule_AddFunctions(module.ptr(), functions) != 0) throw py::error_already_set();
  module.def(
      "register_communicator",
      [](const py::handle& participants, const std::string& communicator_id) {
        if (single_uninitialized()) {
          register_locally(participants, communicator_id);
          return;
        }
        py::reinterpret_borrow<py::object>(backend_module()).attr("register_communicator")(participants,
                                                                                             communicator_id);
      },
      py::arg("participants"), py::arg("communicator_id") = "");
}

}  // namespace popdist::python
