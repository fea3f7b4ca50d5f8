#pragma once
// Maps popdist's C++ exceptions to the Python classes of popdist/errors.py (defined once, in
// Python, so that both extension modules raise the very same classes).

#include <pybind11/pybind11.h>

namespace popdist::python {

/// Registers, for the calling extension module only, a translator from popdist::Error and its
/// subclasses to popdist.errors.*, carrying the structured fields (MPI function/code/message,
/// missing instances, failed instance/type/message) as attributes.
void register_exception_translator();

/// For a plain CPython function (the hot paths bypass pybind11's dispatcher): sets the Python
/// exception pybind11 would raise for the C++ exception being handled (the calling module's
/// translator first: popdist.errors.*) and returns nullptr, the function's result. Call it from a
/// catch block only. (Each module compiles this file, so "the calling module" is the one it is in.)
PyObject* raise_current_exception();

}  // namespace popdist::python
