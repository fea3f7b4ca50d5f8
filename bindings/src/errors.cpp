#include "errors.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>

#include "popdist/error.hpp"
#include "python_arguments.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

// Builds popdist.errors.<class_name>(message, **fields) and sets it as the current Python error.
// The message names the Python API already: the bindings pass their names in (python_call).
void raise_python(const char* class_name, const char* message, const py::dict& fields = py::dict()) {
  try {
    py::object cls = py::module_::import("popdist.errors").attr(class_name);
    py::object exception = cls(message, **fields);
    PyErr_SetObject(cls.ptr(), exception.ptr());
  } catch (py::error_already_set& failure) {
    failure.restore();  // the import or the constructor failed: report that instead
  }
}

}  // namespace

PyObject* raise_current_exception() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    py::detail::try_translate_exceptions();
  }
  return nullptr;
}

void register_exception_translator() {
  // Once per process, for every module: the error types live once, in the shared core, whichever
  // module throws them. pybind11's global translators are tried after each module's local ones.
  static bool registered = false;
  if (registered) return;
  registered = true;
  py::register_exception_translator([](std::exception_ptr pending) {
    try {
      if (pending) std::rethrow_exception(pending);
    } catch (const popdist::TimeoutError& e) {
      py::dict fields;
      fields["missing_instances"] = py::cast(e.missing_instances());
      raise_python("TimeoutError", e.what(), fields);
    } catch (const popdist::RemoteExecutionError& e) {
      py::dict fields;
      fields["instance"] = e.failed_instance();
      fields["exception_type"] = e.exception_type();
      fields["exception_message"] = e.exception_message();
      raise_python("RemoteExecutionError", e.what(), fields);
    } catch (const popdist::MpiError& e) {
      py::dict fields;
      fields["function"] = e.function();
      fields["code"] = e.code();
      fields["mpi_message"] = e.mpi_message();
      raise_python("MPIError", e.what(), fields);
    } catch (const popdist::EnvironmentError& e) {
      raise_python("PopDistEnvironmentError", e.what());
    } catch (const popdist::TopologyError& e) {
      raise_python("TopologyError", e.what());
    } catch (const popdist::UsageError& e) {
      raise_python("UsageError", e.what());
    } catch (const popdist::Error& e) {
      raise_python("PopDistError", e.what());
    }
    // Anything else propagates to pybind11's default translators (RuntimeError, MemoryError, ...).
  });
}

}  // namespace popdist::python
