#pragma once
// The registry's calls as popdist._core functions (the one core under Python): each goes to the
// MPI binding in popdist._mpi once init() has run, to the one-instance path without MPI
// (single_instance.hpp) in a job of one instance before it, and otherwise to the MPI binding,
// which checks the arguments and then names the missing init().

#include <pybind11/pybind11.h>

namespace popdist::python {

/// Adds synchronize, execute_on_instances and register_communicator to `module`.
void add_entry_points(pybind11::module_& module);

}  // namespace popdist::python
