#pragma once
// broadcast_bytes and allgather_bytes for the framework helpers (see collectives.cpp).

#include <pybind11/pybind11.h>

namespace popdist::python {

void register_collectives(pybind11::module_& m);

}  // namespace popdist::python
