#pragma once
// Maps popdist's C++ exceptions to the Python classes of popdist/errors.py. Part of the shared
// core (libpopdist_python_core.so): one translator for both extension modules.

#include <pybind11/pybind11.h>

namespace popdist::python {

/// Registers, once per process (later calls do nothing), a translator from popdist::Error and its
/// subclasses to popdist.errors.*, carrying the structured fields (MPI function/code/message,
/// missing instances, failed instance/type/message) as attributes.
void register_exception_translator();

/// For a plain CPython function (the hot paths bypass pybind11's dispatcher): sets the Python
/// exception pybind11 would raise for the C++ exception being handled (popdist.errors.* through the
/// translator above) and returns nullptr, the function's result. Call it from a catch block only.
PyObject* raise_current_exception();

}  // namespace popdist::python
