#pragma once
// popdist::Topology <-> a Python dict. The Python layer wraps the dict in popdist.Topology (one
// read-only class whichever extension module produced it); the keys are those of
// `popdist topology --json`, plus "ipus_per_replica_set" which the Python class keeps private.

#include <pybind11/pybind11.h>

#include "shared_core.hpp"

#include "popdist/topology.hpp"

namespace popdist::python {

/// Every field of `topology` under its JSON key; host_index is None when unknown.
POPDIST_PYTHON_API pybind11::dict topology_to_dict(const Topology& topology);

/// The inverse of topology_to_dict() (missing keys keep Topology's defaults). Accepts a dict or
/// an object with a `_fields` dict (popdist.Topology). Throws popdist::UsageError for an unknown
/// launcher name.
POPDIST_PYTHON_API Topology topology_from_object(const pybind11::handle& object);

}  // namespace popdist::python
