#include "lifecycle.hpp"

#include "current_topology.hpp"
#include "mpi_backend.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

py::module_ backend_as_module() { return py::reinterpret_borrow<py::module_>(backend_module()); }

// Imports popdist._mpi (libmpi is loaded there, never by `import popdist`) and starts the runtime,
// whose init() refines the one current topology in place (current_topology.hpp). True when this
// call started MPI: then
// popdist owns the job's exit policy (popdist._lifecycle installs the excepthook).
bool start_backend() {
  py::module_ module = backend_as_module();
  return module.attr("init")().cast<bool>();
}

void finalize() {
  if (loaded_backend() != nullptr) backend_as_module().attr("finalize")();
}

}  // namespace

void add_lifecycle(py::module_& module) {
  module.def("start_backend", &start_backend,
             "Starts the MPI backend (idempotent); True when this call started MPI. popdist._lifecycle.init() "
             "calls it (see popdist.init()).");
  module.def("is_initialized", &backend_initialized, "True between init() and finalize(); never imports MPI.");
  module.def("finalize", &finalize, "Frees popdist's communicators; finalizes MPI if init() started it.");
  module.def("backend", &backend_as_module, "popdist._mpi, imported on first use (libmpi is loaded there).");
}

}  // namespace popdist::python
