#include "current_topology.hpp"

#include "popdist/environment.hpp"
#include "popdist/topology.hpp"
#include "topology_dict.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

// A strong reference for the process, deliberately never released: a static py::object would be
// destroyed after the interpreter is gone.
PyObject* g_current = nullptr;

py::object wrapped(const py::handle& fields) {
  return py::module_::import("popdist._topology").attr("Topology")(fields);
}

void store(py::object topology) {
  PyObject* previous = g_current;
  g_current = topology.release().ptr();
  Py_XDECREF(previous);
}

}  // namespace

py::object current_topology() {
  if (g_current == nullptr) store(wrapped(topology_to_dict(detect(process_environment()))));
  return py::reinterpret_borrow<py::object>(g_current);
}

int current_num_instances() { return current_topology().attr("num_instances").cast<int>(); }

void adopt_topology(const py::handle& fields) { store(wrapped(fields)); }

py::object replace_topology(const py::handle& topology) {
  py::object previous = g_current != nullptr ? py::reinterpret_borrow<py::object>(g_current) : py::none();
  if (topology.is_none()) {
    Py_CLEAR(g_current);
  } else {
    store(py::reinterpret_borrow<py::object>(topology));
  }
  return previous;
}

}  // namespace popdist::python
