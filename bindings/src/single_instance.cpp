#include "single_instance.hpp"

#include <cstdlib>
#include <optional>
#include <set>
#include <string_view>

#include "current_topology.hpp"
#include "mpi_backend.hpp"
#include "popdist/arguments.hpp"
#include "popdist/error.hpp"
#include "python_arguments.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

// The ids used so far: in a job of one instance they all name {0}, so an id is known once any call
// has named it with its participants (or registered it).
std::set<std::string>& local_ids() {
  static auto* ids = new std::set<std::string>();  // never destroyed: exit handlers may still ask
  return *ids;
}

}  // namespace

bool single_uninitialized() { return !backend_initialized() && current_num_instances() == 1; }

void register_locally(py::handle participants, const std::string& communicator_id) {
  (void)checked_instance_list(participants, 1, "registerCommunicator", "participants", false);
  if (!communicator_id.empty()) local_ids().insert(communicator_id);
}

void synchronize_locally(py::handle communicator_id, const std::string& name, PyObject* participants,
                         PyObject* timeout) {
  (void)timeout_seconds(timeout != nullptr ? py::handle(timeout) : py::handle(Py_None), "synchronize");
  // POPDIST_SYNC_TIMEOUT under the timeout rule: a bad value is an error here as under MPI.
  const char* variable = std::getenv("POPDIST_SYNC_TIMEOUT");
  (void)parsed_timeout_variable(variable != nullptr ? std::optional<std::string_view>(variable) : std::nullopt);
  std::vector<int> members;
  if (participants != nullptr) {
    members = checked_instance_list(participants, 1, "synchronize(participants=...)", "participants", true);
  }
  if (!name.empty() && members.empty() && local_ids().count(name) == 0) {
    const auto shown = shown_repr(communicator_id);
    throw UsageError("synchronize: unknown communicator id " + shown +
                     " (no ids are registered); register it first with registerCommunicator(participants, " + shown +
                     "), or pass the participants");
  }
  if (!name.empty()) local_ids().insert(name);
}

py::object execute_locally(py::handle instances, py::handle func, py::handle args, py::handle kwargs) {
  // Instance 0 is the only valid member, and it is this process.
  (void)checked_instance_list(instances, 1, "execute_on_instances", "instances", false);
  if (PyCallable_Check(func.ptr()) == 0) {
    throw UsageError("execute_on_instances: func must be callable, got " + std::string(py::repr(func)));
  }
  PyObject* keywords = PyDict_GET_SIZE(kwargs.ptr()) != 0 ? kwargs.ptr() : nullptr;
  PyObject* result = PyObject_Call(func.ptr(), args.ptr(), keywords);
  if (result == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(result);
}

}  // namespace popdist::python
