// popdist._mpi: the MPI runtime and the communicator registry, a backend of popdist._core over the
// same shared core (bindings/CMakeLists.txt says why there are two modules). _core imports it on the
// first call that needs MPI (init, synchronize, registerCommunicator, execute_on_instances, comm,
// finalize), so that `import popdist` and the getters never load libmpi, and reaches its hot paths
// through the table of mpi_backend.hpp.
//
// Every call that can block in MPI releases the GIL: another Python thread (a data loader, a
// heartbeat) must keep running while this one waits in a barrier.

#include <mpi.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include "collectives.hpp"
#include "current_topology.hpp"
#include "errors.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi_backend.hpp"
#include "popdist/arguments.hpp"
#include "popdist/error.hpp"
#include "popdist/grouping.hpp"
#include "popdist/interrupts.hpp"
#include "popdist/registry.hpp"
#include "popdist/runtime.hpp"
#include "python_arguments.hpp"
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
  const std::string ours = popdist::detail::mpi_library_version();
  std::string theirs = py::str(mpi4py_mpi.attr("Get_library_version")());
  if (theirs.rfind(ours.substr(0, 40), 0) != 0 && ours.rfind(theirs.substr(0, 40), 0) != 0) {
    throw popdist::UsageError("popdist.comm(): mpi4py is built against another MPI library (" +
                              theirs.substr(0, theirs.find('\n')) + ") than popdist (" +
                              ours.substr(0, ours.find('\n')) + "); rebuild mpi4py from source against this MPI");
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

// The GIL released for a blocking call, as a scope (PyEval_SaveThread/RestoreThread directly: the
// hot paths are measured against mpi4py's `with nogil`, which compiles to the same two calls).
// Reacquired re-takes it inside that scope, e.g. to run a Python function between MPI calls.
class ReleasedGil {
 public:
  ReleasedGil() : state_(PyEval_SaveThread()) {}
  ~ReleasedGil() { PyEval_RestoreThread(state_); }
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;

  class Reacquired {
   public:
    explicit Reacquired(ReleasedGil& released) : released_(released) { PyEval_RestoreThread(released_.state_); }
    ~Reacquired() { released_.state_ = PyEval_SaveThread(); }
    Reacquired(const Reacquired&) = delete;
    Reacquired& operator=(const Reacquired&) = delete;

   private:
    ReleasedGil& released_;
  };

 private:
  PyThreadState* state_;
};

// Instance indices from Python, checked under the Python API's name `caller`: the common shapes
// (a set, frozenset, list or tuple of plain ints) are read directly, anything else (a range, a
// generator, numpy integers) through the shared converter; the core's rule checks both.
std::vector<int> checked_instance_list(py::handle values, const char* caller, const char* argument,
                                       bool allow_empty = false) {
  std::vector<int> members;
  PyTypeObject* type = Py_TYPE(values.ptr());
  bool plain = type == &PySet_Type || type == &PyFrozenSet_Type || type == &PyList_Type || type == &PyTuple_Type;
  // A list longer than the job can hold valid members goes to the converter, which reads only
  // its start (bounded messages and memory whatever the size).
  plain = plain && static_cast<std::size_t>(PyObject_Length(values.ptr())) <=
                       static_cast<std::size_t>(popdist::num_instances());
  if (plain) {
    members.reserve(static_cast<std::size_t>(PyObject_Length(values.ptr())));
    for (py::handle item : values) {
      int overflow = 0;
      long index = PyLong_CheckExact(item.ptr()) ? PyLong_AsLongAndOverflow(item.ptr(), &overflow) : -1;
      if (!PyLong_CheckExact(item.ptr()) || overflow != 0 || index < std::numeric_limits<int>::min() ||
          index > std::numeric_limits<int>::max()) {
        plain = false;  // a bool, a numpy integer, a huge int...: the converter names it
        break;
      }
      members.push_back(static_cast<int>(index));
    }
  }
  if (!plain) {
    return popdist::python::checked_instance_list(values, popdist::num_instances(), caller, argument, allow_empty);
  }
  return popdist::checked_instances(members, popdist::num_instances(), caller, allow_empty);
}

popdist::InstanceSet as_set(const std::vector<int>& sorted_members) {
  return popdist::InstanceSet(sorted_members.begin(), sorted_members.end());
}

using popdist::python::bind_synchronize_arguments;
using popdist::python::communicator_id_of;
using popdist::python::python_call;
using popdist::python::raise_current_exception;

// The empty arguments of the bare call, built once rather than per call.
const std::string kNoCommunicatorId;
const popdist::InstanceSet kNoParticipants;

// synchronize() with arguments: converted and checked under the Python API's names, before any MPI.
void synchronize_with_arguments(PyObject* const* arguments, Py_ssize_t count, PyObject* keywords) {
  PyObject* values[3] = {nullptr, nullptr, nullptr};
  if (!bind_synchronize_arguments(arguments, count, keywords, values)) throw py::error_already_set();
  const std::string communicator_id = values[0] != nullptr ? communicator_id_of(values[0]) : std::string();
  popdist::InstanceSet members;
  if (values[1] != nullptr) {
    members = as_set(checked_instance_list(values[1], "synchronize(participants=...)", "participants", true));
  }
  std::optional<popdist::Seconds> seconds;
  if (values[2] != nullptr) {
    if (const auto checked = popdist::python::timeout_seconds(values[2], "synchronize")) {
      seconds = popdist::Seconds(*checked);
    }
  }
  ReleasedGil released;  // a barrier blocks: other Python threads keep running meanwhile
  popdist::detail::synchronize(communicator_id, members, seconds, python_call("synchronize"));
}

// synchronize(communicator_id='', participants=(), timeout=None): the one Python binding of
// popdist::synchronize, and what popdist.synchronize (popdist._core's) calls once init() has run
// (through the table of mpi_backend.hpp). Plain CPython rather than pybind11: pybind11's dispatcher
// (argument loading, overload resolution) costs a visible share of a barrier as cheap as mpi4py's
// one-rank Barrier(), the benchmark's baseline (tests/bench/README.md). Without arguments nothing
// is converted at all.
PyObject* synchronize(PyObject* /*module*/, PyObject* const* arguments, Py_ssize_t count, PyObject* keywords) {
  try {
    if (count == 0 && (keywords == nullptr || PyTuple_GET_SIZE(keywords) == 0)) {
      ReleasedGil released;
      popdist::detail::synchronize(kNoCommunicatorId, kNoParticipants, std::nullopt, python_call("synchronize"));
    } else {
      synchronize_with_arguments(arguments, count, keywords);
    }
  } catch (...) {
    return raise_current_exception();
  }
  Py_RETURN_NONE;
}

// execute_on_instances(instances, func, args, kwargs), positional only (the Python layer's
// wrapper packs *args and **kwargs). Plain CPython too: it is benchmarked against the same shape in
// mpi4py, and pybind11 would add its dispatch and argument loading to every call.
PyObject* execute_on_instances(PyObject* /*module*/, PyObject* const* arguments, Py_ssize_t count) {
  if (count != 4 || !PyTuple_Check(arguments[2]) || !PyDict_Check(arguments[3])) {
    PyErr_SetString(PyExc_TypeError, "execute_on_instances(instances, func, args: tuple, kwargs: dict)");
    return nullptr;
  }
  PyObject* func = arguments[1];
  PyObject* args = arguments[2];
  // An empty kwargs dict is passed as NULL: PyObject_Call then skips copying it.
  PyObject* keywords = PyDict_GET_SIZE(arguments[3]) != 0 ? arguments[3] : nullptr;
  try {
    // Checked here, before any MPI: the Python layer hands its arguments over unchecked.
    const auto members = as_set(checked_instance_list(arguments[0], "execute_on_instances", "instances"));
    if (PyCallable_Check(func) == 0) {
      throw popdist::UsageError("execute_on_instances: func must be callable, got " +
                                std::string(py::repr(func)));
    }
    py::object result = py::none();
    {
      // Without the GIL while the runtime waits in MPI; with it while func runs. A Python
      // exception leaves func as error_already_set (which re-acquires the GIL to release its
      // state), the runtime tells the other members and rethrows it here unchanged, so the
      // failing member sees its own exception object.
      ReleasedGil released;
      popdist::detail::execute_on_instances(
          members,
          [&] {
            ReleasedGil::Reacquired gil(released);
            PyObject* value = PyObject_Call(func, args, keywords);
            if (value == nullptr) throw py::error_already_set();
            result = py::reinterpret_steal<py::object>(value);
          },
          describe_failure, python_call("execute_on_instances"));
    }
    return result.release().ptr();
  } catch (...) {
    return raise_current_exception();
  }
}

// popdist's waits call this about every 50 ms while they sleep (popdist/interrupts.hpp): Python's
// signal handlers run (in the main thread only, as always), and a KeyboardInterrupt they raise
// abandons the wait and reaches the caller, instead of Ctrl-C waiting for the others to arrive.
void check_python_signals() {
#if PY_VERSION_HEX >= 0x030D0000
  const bool finalizing = Py_IsFinalizing() != 0;
#else
  const bool finalizing = _Py_IsFinalizing() != 0;  // public as Py_IsFinalizing from 3.13
#endif
  if (Py_IsInitialized() == 0 || finalizing) return;
  const PyGILState_STATE gil = PyGILState_Ensure();
  if (PyErr_CheckSignals() != 0) {
    py::error_already_set raised;  // takes the pending exception (with the GIL held)
    PyGILState_Release(gil);
    throw raised;
  }
  PyGILState_Release(gil);
}

// The table popdist._core finds (mpi_backend.hpp).
const popdist::python::MpiBackend kMpiBackend{&popdist::is_initialized, &synchronize, &execute_on_instances};

PyMethodDef hot_functions[] = {
    {"execute_on_instances", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(execute_on_instances)),
     METH_FASTCALL,
     "execute_on_instances(instances, func, args, kwargs)\n--\n\n"
     "Runs func(*args, **kwargs) on the members of instances (scoped to them); None elsewhere."},
    {"synchronize", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(synchronize)),
     METH_FASTCALL | METH_KEYWORDS, popdist::python::kSynchronizeDoc},
    {nullptr, nullptr, 0, nullptr}};

// MPI's start and stop, and the runtime's topology.
void add_runtime_calls(py::module_& m) {
  m.def(
      "init",
      [] {
        // Tell the Python layer whether popdist started MPI: only then does it install the
        // abort-on-uncaught-exception hook (whoever initialized MPI owns the job's exit policy).
        const bool was_initialized = popdist::detail::mpi_was_initialized();
        {
          py::gil_scoped_release release;
          popdist::init();
        }
        // The shared core's current topology becomes the runtime's refined one.
        popdist::python::adopt_topology(popdist::python::topology_to_dict(popdist::topology()));
        return !was_initialized;
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
}

// The hot paths as plain CPython functions, and the table through which popdist._core reaches them.
void add_hot_paths(py::module_& m) {
  if (PyModule_AddFunctions(m.ptr(), hot_functions) != 0) throw py::error_already_set();
  // How popdist._core finds the hot paths above (mpi_backend.hpp).
  PyObject* backend = PyCapsule_New(const_cast<popdist::python::MpiBackend*>(&kMpiBackend),
                                    popdist::python::kMpiBackendCapsule, nullptr);
  if (backend == nullptr) throw py::error_already_set();
  m.add_object(popdist::python::kMpiBackendAttribute, py::reinterpret_steal<py::object>(backend));
}

// The registry's calls off the hot path (through pybind11's dispatcher): registration, the scope,
// the grouping's communicators and mpi4py communicators.
void add_registry_calls(py::module_& m) {
  m.def(
      "register_communicator",
      [](const py::handle& participants, const std::string& communicator_id, const py::handle& timeout) {
        const auto members = as_set(checked_instance_list(participants, "registerCommunicator", "participants"));
        std::optional<popdist::Seconds> seconds;
        if (const auto checked = popdist::python::timeout_seconds(timeout, "registerCommunicator")) {
          seconds = popdist::Seconds(*checked);
        }
        py::gil_scoped_release release;
        popdist::detail::register_communicator(members, communicator_id, seconds, python_call("registerCommunicator"));
      },
      py::arg("participants"), py::arg("communicator_id") = "", py::arg("timeout") = py::none());
  m.def("current_scope", &popdist::current_scope);
  m.def(
      "register_grouping_communicators",
      [](int replication_factor, int group_size, int stride) {
        popdist::ReplicaGrouping grouping(replication_factor, group_size, stride);
        py::gil_scoped_release release;
        return popdist::detail::register_grouping_communicators(grouping, python_call("registerGroupingCommunicators"));
      },
      py::arg("replication_factor"), py::arg("group_size"), py::arg("stride"));
  m.def(
      "comm",
      [](const std::string& communicator_id, const py::handle& values) -> py::object {
        const auto participants = as_set(checked_instance_list(values, "comm(participants=...)", "participants", true));
        MPI_Comm comm = MPI_COMM_NULL;
        {
          py::gil_scoped_release release;  // the first use of a set creates its communicator (collective)
          comm = popdist::detail::native_communicator(communicator_id, participants, python_call("comm"));
        }
        if (comm == MPI_COMM_NULL) return py::none();
        return to_mpi4py(comm);
      },
      py::arg("communicator_id") = "", py::arg("participants") = py::tuple());
}

}  // namespace

PYBIND11_MODULE(_mpi, m) {
  m.doc() = "popdist's MPI layer: init/finalize, communicators, synchronize, execute_on_instances.";
  popdist::python::register_exception_translator();
  popdist::python::register_collectives(m);  // broadcast_bytes, allgather_bytes (collectives.cpp)
  popdist::set_interrupt_check(check_python_signals);
  add_runtime_calls(m);
  add_registry_calls(m);
  add_hot_paths(m);
}
