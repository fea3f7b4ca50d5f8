// Small collectives over the current scope for the framework helpers (popdist.torch,
// popdist.lightning): instance 0 broadcasting a rendezvous address, every instance gathering a
// seed. The library does them (popdist/collectives.hpp, popdist::detail: bounded by the timeout
// rule of synchronize, and named in the error of an instance that meets them with another call);
// this converts the arguments and releases the GIL while MPI waits. Registered into popdist._mpi
// by register_collectives().

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "popdist/collectives.hpp"
#include "python_arguments.hpp"

namespace py = pybind11;

namespace {

py::bytes broadcast_bytes(const std::string& data, int root, const py::handle& timeout, const std::string& caller) {
  const auto seconds = popdist::python::timeout_seconds(timeout, caller.c_str());
  std::string buffer;
  {
    py::gil_scoped_release release;
    buffer = popdist::detail::broadcast_bytes(data, root, seconds, caller);
  }
  return py::bytes(buffer);
}

std::vector<py::bytes> allgather_bytes(const std::string& data, const py::handle& timeout, const std::string& caller) {
  const auto seconds = popdist::python::timeout_seconds(timeout, caller.c_str());
  std::vector<std::string> pieces;
  {
    py::gil_scoped_release release;
    pieces = popdist::detail::allgather_bytes(data, seconds, caller);
  }
  return {pieces.begin(), pieces.end()};
}

}  // namespace

namespace popdist::python {

void register_collectives(py::module_& m) {
  m.def("broadcast_bytes", &broadcast_bytes, py::arg("data"), py::arg("root") = 0, py::arg("timeout") = py::none(),
        py::arg("caller") = "broadcast_bytes",
        "The root member's bytes on every member of the current scope (a collective; needs init()). With a "
        "timeout (seconds; None: POPDIST_SYNC_TIMEOUT when set), bounded: TimeoutError naming the instances that "
        "did not take part, UsageError naming another popdist call an instance made instead, under `caller`.");
  m.def("allgather_bytes", &allgather_bytes, py::arg("data"), py::arg("timeout") = py::none(),
        py::arg("caller") = "allgather_bytes",
        "Every member's bytes, in member order, on every member of the current scope (a collective); `timeout` "
        "as for broadcast_bytes.");
}

}  // namespace popdist::python
