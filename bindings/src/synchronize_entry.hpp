#pragma once
// popdist._core.synchronize, which the package exports as popdist.synchronize.

#include <pybind11/pybind11.h>

namespace popdist::python {

/// Adds `synchronize` to `module` (popdist._core): once popdist._mpi is imported and initialized,
/// it is the binding of popdist::synchronize itself (a C call through the table of
/// synchronize_backend.hpp, arguments untouched); before that (or after finalize()),
/// popdist._api._synchronize_without_mpi with the same arguments (a job of one instance needs no
/// MPI; otherwise that names the missing init()).
void add_synchronize_entry(pybind11::module_& module);

}  // namespace popdist::python
