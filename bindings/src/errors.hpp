#pragma once
// Maps popdist's C++ exceptions to the Python classes of popdist/errors.py (defined once, in
// Python, so that both extension modules raise the very same classes).

namespace popdist::python {

/// Registers, for the calling extension module only, a translator from popdist::Error and its
/// subclasses to popdist.errors.*, carrying the structured fields (MPI function/code/message,
/// missing instances, failed instance/type/message) as attributes.
void register_exception_translator();

}  // namespace popdist::python
