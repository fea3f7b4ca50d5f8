#include "lifecycle.hpp"

#include <cstdio>

#include "current_topology.hpp"
#include "mpi_backend.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

// The lifecycle's state: Python objects are held as never-released strong references (statics
// destroyed after the interpreter would touch a dead one).
struct Lifecycle {
  bool owns_mpi = false;          ///< init() started MPI: the runtime's on_exit handler finalizes it
  PyObject* exit_callback = nullptr;  ///< the one atexit callback (at_exit_callback), once registered
  bool hook_installed = false;    ///< sys.excepthook arms the abort
  bool abort_armed = false;
  bool abort_forced = false;      ///< abort although init() did not complete (MPI up, exchange not)
  PyObject* teardowns = nullptr;  ///< a list of callables, run newest first at exit
};
Lifecycle g_lifecycle;

py::module_ backend_as_module() { return py::reinterpret_borrow<py::module_>(backend_module()); }

void abort_job_now() {
  for (const char* name : {"stdout", "stderr", "__stdout__", "__stderr__"}) {
    PyObject* stream = PySys_GetObject(name);  // borrowed
    if (stream == nullptr || stream == Py_None) continue;
    PyObject* flushed = PyObject_CallMethod(stream, "flush", nullptr);
    if (flushed == nullptr) PyErr_Clear();  // a closed stream must not stop the abort
    Py_XDECREF(flushed);
  }
  const auto* table = loaded_backend();
  if (table != nullptr && (g_lifecycle.abort_forced || table->initialized())) {
    backend_as_module().attr("abort_job")(1);  // MPI_Abort when MPI is up (and not finalized), else an exit
  }
}

void arm_abort(bool forced) {
  g_lifecycle.abort_forced = g_lifecycle.abort_forced || forced;
  if (g_lifecycle.abort_armed) return;
  g_lifecycle.abort_armed = true;
  py::cpp_function abort_now(&abort_job_now);
  // Registered now, hence run first (atexit is LIFO): after every excepthook has returned.
  py::module_::import("atexit").attr("register")(abort_now);
  py::object timer = py::module_::import("threading").attr("Timer")(kAbortFallbackSeconds, abort_now);
  timer.attr("daemon") = true;
  timer.attr("start")();
}

// Chains sys.excepthook so that an uncaught exception ends the whole job. Without it the failing
// instance would go on to MPI_Finalize while the others wait forever in their next collective.
// The abort does not happen inside the hook: hooks chained later (torch.distributed's
// init_process_group points sys.stderr at a buffer while the inner hooks run, writing it when they
// return) would lose the traceback.
void install_abort_hook() {
  if (g_lifecycle.hook_installed) return;
  py::object previous = py::module_::import("sys").attr("excepthook");
  py::cpp_function hook(
      [previous](py::handle type, py::handle value, py::handle traceback) {
        auto arm_if_in_a_job = [] {
          if (backend_initialized() && current_num_instances() > 1) arm_abort(false);
        };
        try {
          previous(type, value, traceback);
        } catch (...) {
          arm_if_in_a_job();
          throw;
        }
        arm_if_in_a_job();
      },
      py::name("abort_on_uncaught_exception"));
  py::module_::import("sys").attr("excepthook") = hook;
  g_lifecycle.hook_installed = true;
}

void finalize() {
  if (loaded_backend() != nullptr) backend_as_module().attr("finalize")();
}

// The one atexit callback.
void at_exit_callback() {
  if (g_lifecycle.teardowns != nullptr) {
    py::list teardowns = py::reinterpret_borrow<py::list>(g_lifecycle.teardowns);
    for (Py_ssize_t i = static_cast<Py_ssize_t>(teardowns.size()) - 1; i >= 0; --i) {
      try {
        teardowns[static_cast<std::size_t>(i)]();
      } catch (py::error_already_set& error) {
        error.discard_as_unraisable("popdist's teardown at exit");
      }
    }
  }
  if (g_lifecycle.owns_mpi) return;  // the runtime's on_exit handler, with the exit status
  try {
    finalize();
  } catch (py::error_already_set& error) {  // at exit there is nobody left to raise to
    py::print("popdist: finalize at exit failed:", py::str(error.value()),
              py::arg("file") = py::module_::import("sys").attr("stderr"));
  }
}

// Registers the one atexit callback; `latest`: move it to the newest place (atexit runs newest
// first), so that a teardown added now runs before the exit handlers registered until now, as if
// it had registered its own. popdist.torch's release ran there when it did register its own; run
// later (from init()'s place), an unmodified Accelerate script under `popdist run` was seen to end
// in std::terminate at exit (gloo threads left to the interpreter's teardown), once in a full run.
void register_exit(bool latest) {
  py::module_ atexit = py::module_::import("atexit");
  if (g_lifecycle.exit_callback != nullptr) {
    if (!latest) return;
    atexit.attr("unregister")(py::handle(g_lifecycle.exit_callback));
  } else {
    g_lifecycle.exit_callback = py::cpp_function(&at_exit_callback, py::name("popdist_at_exit")).release().ptr();
  }
  atexit.attr("register")(py::handle(g_lifecycle.exit_callback));
}

void init() {
  py::module_ module = backend_as_module();
  bool initialized_mpi = false;
  try {
    // Ctrl-C inside a step MPI cannot leave (MPI_Init_thread) still ends the instance (_uninterruptible.py).
    initialized_mpi =
        py::module_::import("popdist._uninterruptible").attr("call")(module.attr("init"), "popdist.init()").cast<bool>();
  } catch (py::error_already_set& error) {
    // Ctrl-C inside init()'s exchange: the others wait in it for this instance. End the job as an
    // uncaught exception after init() would, once the traceback is out.
    if (error.matches(PyExc_KeyboardInterrupt) && current_num_instances() > 1) arm_abort(true);
    throw;
  }
  if (initialized_mpi) {
    // Whoever initialized MPI owns the job's exit policy: with mpi4py's runner, mpi4py.
    g_lifecycle.owns_mpi = true;
    install_abort_hook();
  }
  register_exit(false);
}

void at_exit(const py::object& teardown) {
  if (PyCallable_Check(teardown.ptr()) == 0) throw py::type_error("at_exit: expected a callable");
  if (g_lifecycle.teardowns == nullptr) g_lifecycle.teardowns = py::list().release().ptr();
  py::reinterpret_borrow<py::list>(g_lifecycle.teardowns).append(teardown);
  register_exit(true);
}

}  // namespace

void add_lifecycle(py::module_& module) {
  module.def("init", &init, "Starts the MPI backend (idempotent); see popdist.init().");
  module.def("is_initialized", &backend_initialized, "True between init() and finalize(); never imports MPI.");
  module.def("finalize", &finalize, "Frees popdist's communicators; finalizes MPI if init() started it.");
  module.def("at_exit", &at_exit, py::arg("teardown"),
             "Runs teardown() at interpreter exit, before popdist finalizes (newest first).");
  module.def("backend", &backend_as_module, "popdist._mpi, imported on first use (libmpi is loaded there).");
  module.attr("ABORT_FALLBACK_SECONDS") = kAbortFallbackSeconds;
}

}  // namespace popdist::python
