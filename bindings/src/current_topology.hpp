#pragma once
// The process's current topology under Python, held once, in the shared core both modules load:
// detected from the process environment (no MPI) on first use, replaced by the MPI runtime's
// refined one when _mpi's init() completes (mpi_module.cpp). The Python package only reads it.

#include <pybind11/pybind11.h>

#include "shared_core.hpp"

namespace popdist::python {

/// The current topology as a popdist.Topology object (the same object until init() refines it).
/// A bad environment raises popdist.PopDistEnvironmentError naming the variable.
[[nodiscard]] POPDIST_PYTHON_API pybind11::object current_topology();

/// The current topology's number of instances.
[[nodiscard]] int current_num_instances();

/// After init(): `fields` (the MPI runtime's topology as a dict) becomes the current topology.
POPDIST_PYTHON_API void adopt_topology(const pybind11::handle& fields);

/// Replaces the current topology by `topology` (a popdist.Topology), or forgets it (None: detect
/// again on next use). For tests that pretend to be launched; returns the one it replaced.
POPDIST_PYTHON_API pybind11::object replace_topology(const pybind11::handle& topology);

}  // namespace popdist::python
