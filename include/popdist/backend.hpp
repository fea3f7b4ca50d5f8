#pragma once
/// @file backend.hpp
/// PopDist's backend by PopDist's names (`<popdist/backend.hpp>`): starting MPI, the
/// communicator registry and PopDist's exception type. Forwards to runtime.hpp and registry.hpp.
#include <set>
#include <string>

#include "popdist/error.hpp"
#include "popdist/registry.hpp"
#include "popdist/runtime.hpp"

namespace popdist {

/// PopDist's exception type: every exception popdist throws derives from it (it is popdist::Error),
/// so `catch (const popdist::popdist_error&)` catches them all.
using popdist_error = Error;

// init() is runtime.hpp's popdist::init() (idempotent), and synchronize(communicatorId,
// participants) registry.hpp's: the names are PopDist's already.

/// True between init() and finalize().
[[nodiscard]] inline bool isBackendInitialized() noexcept { return is_initialized(); }

/// The communicator id of the default communicator: all instances (inside execute_on_instances,
/// its set). Every collective and synchronize takes it as "the current scope".
[[nodiscard]] inline std::string defaultCommunicatorId() { return std::string(); }

/// Registers a communicator over `instances` under `communicatorId` (empty: named by its
/// members). Needs init(); see register_communicator() in registry.hpp.
inline void registerCommunicator(const std::set<int>& instances, const std::string& communicatorId = "") {
  register_communicator(instances, communicatorId);
}

}  // namespace popdist
