// popdist._mpi: the MPI runtime and the communicator registry. Imported lazily by the Python layer
// on the first call that needs MPI (init, synchronize, registerCommunicator, execute_on_instances,
// comm, finalize), so that `import popdist` and the getters never load libmpi.
//
// Every call that can block in MPI releases the GIL: another Python thread (a data loader, a
// heartbeat) must keep running while this one waits in a barrier.

#include <mpi.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <optional>
#include <set>
#include <string>
#include <typeinfo>

#include "errors.hpp"
#include "popdist/error.hpp"
#include "popdist/grouping.hpp"
#include "popdist/registry.hpp"
#include "popdist/runtime.hpp"
#include "topology_dict.hpp"

namespace py = pybind11;

namespace {

// "ValueError" for builtins, else "module.QualifiedName": what the other members are told.
std::string python_type_name(const py::handle& type) {
  std::string qualname = py::str(type.attr("__qualname__"));
  std::string module = py::hasattr(type, "__module__") ? std::string(py::str(type.attr("__module__"))) : "";
  return module.empty() || module == "builtins" ? qualname : module + "." + qualname;
}

// Describes a failure of the Python function for the members it did not fail on. Called by the
// runtime, possibly without the GIL, hence the (re-entrant) acquire.
popdist::FailureInfo describe_failure(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (py::error_already_set& e) {
    py::gil_scoped_acquire gil;
    std::string message;
    try {
      message = py::str(e.value());
    } catch (py::error_already_set&) {
      message = "<exception str() failed>";
    }
    return {python_type_name(e.type()), message};
  } catch (const std::exception& e) {
    return {typeid(e).name(), e.what()};
  } catch (...) {
    return {"unknown", "a non-standard C++ exception"};
  }
}

// mpi4py hands out communicator objects through its C API; its capsules live in
// mpi4py.MPI.__pyx_capi__, so popdist needs no build-time dependency on mpi4py.
py::object to_mpi4py(MPI_Comm comm) {
  py::module_ mpi4py_mpi = py::module_::import("mpi4py.MPI");
  // Both sides must speak the same MPI ABI: a handle from one MPI library is garbage in another.
  char ours[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(ours, &length);
  std::string theirs = py::str(mpi4py_mpi.attr("Get_library_version")());
  if (theirs.rfind(std::string(ours, length).substr(0, 40), 0) != 0 &&
      std::string(ours, length).rfind(theirs.substr(0, 40), 0) != 0) {
    throw popdist::UsageError("popdist.comm(): mpi4py is built against another MPI library (" +
                              theirs.substr(0, theirs.find('\n')) + ") than popdist (" +
                              std::string(ours, length).substr(0, std::string(ours, length).find('\n')) +
                              "); rebuild mpi4py from source against this MPI");
  }
  py::object capsule = mpi4py_mpi.attr("__pyx_capi__")["PyMPIComm_New"];
  void* pointer = PyCapsule_GetPointer(capsule.ptr(), PyCapsule_GetName(capsule.ptr()));
  if (pointer == nullptr) throw py::error_already_set();
  using PyMPIComm_New = PyObject* (*)(MPI_Comm);
  // The new object does not own the handle (mpi4py frees only what it created): popdist keeps
  // ownership and frees it in finalize().
  PyObject* object = reinterpret_cast<PyMPIComm_New>(pointer)(comm);
  if (object == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(object);
}

}  // namespace

PYBIND11_MODULE(_mpi, m) {
  m.doc() = "popdist's MPI layer: init/finalize, communicators, synchronize, execute_on_instances.";
  popdist::python::register_exception_translator();

  m.def(
      "init",
      [] {
        // Tell the Python layer whether popdist started MPI: only then does it install the
        // abort-on-uncaught-exception hook (whoever initialized MPI owns the job's exit policy).
        int was_initialized = 0;
        MPI_Initialized(&was_initialized);
        {
          py::gil_scoped_release release;
          popdist::init();
        }
        return was_initialized == 0;
      },
      "Initializes the MPI backend (idempotent). Returns True when this call initialized MPI.");
  m.def("is_initialized", &popdist::is_initialized);
  m.def("finalize", &popdist::finalize, py::call_guard<py::gil_scoped_release>());
  m.def(
      "abort_job", [](int exit_code) { popdist::abort_job(exit_code); }, py::arg("exit_code"),
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "topology", [] { return popdist::python::topology_to_dict(popdist::topology()); },
      "This process's topology, refined by MPI after init().");
  m.def("register_communicator", &popdist::register_communicator, py::arg("participants"),
        py::arg("communicator_id") = "", py::call_guard<py::gil_scoped_release>());
  m.def(
      "synchronize",
      [](const std::string& communicator_id, const popdist::InstanceSet& participants, std::optional<double> timeout) {
        std::optional<popdist::Seconds> seconds;
        if (timeout) seconds = popdist::Seconds(*timeout);
        popdist::synchronize(communicator_id, participants, seconds);
      },
      py::arg("communicator_id") = "", py::arg("participants") = popdist::InstanceSet{},
      py::arg("timeout") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("current_scope", &popdist::current_scope);
  m.def(
      "register_grouping_communicators",
      [](int replication_factor, int group_size, int stride) {
        popdist::ReplicaGrouping grouping(replication_factor, group_size, stride);
        py::gil_scoped_release release;
        return popdist::register_grouping_communicators(grouping);
      },
      py::arg("replication_factor"), py::arg("group_size"), py::arg("stride"));
  m.def(
      "execute_on_instances",
      [](const popdist::InstanceSet& instances, const py::object& func, const py::tuple& args,
         const py::dict& kwargs) {
        py::object result = py::none();
        {
          // Without the GIL while the runtime waits in MPI; with it while func runs. A Python
          // exception leaves func as error_already_set (which re-acquires the GIL to release its
          // state), the runtime tells the other members and rethrows it here unchanged, so the
          // failing member sees its own exception object.
          py::gil_scoped_release release;
          popdist::execute_on_instances(
              instances,
              [&] {
                py::gil_scoped_acquire gil;
                result = func(*args, **kwargs);
              },
              describe_failure);
        }
        return result;
      },
      py::arg("instances"), py::arg("func"), py::arg("args"), py::arg("kwargs"));
  m.def(
      "comm",
      [](const std::string& communicator_id, const popdist::InstanceSet& participants) -> py::object {
        MPI_Comm comm = MPI_COMM_NULL;
        {
          py::gil_scoped_release release;  // the first use of a set creates its communicator (collective)
          comm = popdist::native_communicator(communicator_id, participants);
        }
        if (comm == MPI_COMM_NULL) return py::none();
        return to_mpi4py(comm);
      },
      py::arg("communicator_id") = "", py::arg("participants") = popdist::InstanceSet{});
}
