#pragma once
/// @file popdist.hpp
/// Umbrella header: everything a user of popdist needs.

#include "popdist/arguments.hpp"
#include "popdist/backend.hpp"
#include "popdist/collectives.hpp"
#include "popdist/context.hpp"
#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "popdist/grouping.hpp"
#include "popdist/registry.hpp"
#include "popdist/runtime.hpp"
#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"
#include "popdist/version.hpp"
