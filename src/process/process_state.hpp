#pragma once
// The process-wide state of popdist, in one place (the shape of Horovod's HorovodGlobalState):
// what each layer keeps for the life of the process, who writes it, and the one teardown order.
// This is the top of the library's layers (design.md §2): it includes the runtime and the registry;
// neither includes it, and the runtime never includes the registry. Each layer reaches its own
// part through an accessor declared in its own header (runtime_state(), registry()) and defined
// in process_state.cpp over the one ProcessState.

#include "registry/registry.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {

/// Everything popdist keeps for the process, by layer. Made on first use and never destroyed:
/// MPI must never be touched from a static destructor (finalize runs from finalize() or from
/// the runtime's exit handler instead), and references handed out (topologies, entries) must
/// outlive every caller.
///
/// Lifecycle (process/lifecycle.cpp, which decides it), under runtime.lifecycle_mutex:
///   init():     1. runtime   start_runtime(): MPI (only if nobody started it), popdist's world,
///                            control and host communicators, the cross-instance checks, the
///                            refined topology (g_hot.topology)
///               2. registry  attach(): the root scope over world with the host barrier over the
///                            host split (collective), each set's barrier strategy from
///                            POPDIST_SYNC_TIMEOUT, the hot pointer (g_root_scope_copy)
///               3.           g_hot.initialized (release: the hot paths read everything above
///                            after acquiring it)
///   finalize() (also at exit: exit_with_status(), from the runtime's on_exit hook), the reverse:
///               1.           g_hot.initialized = false
///               2. registry  release_all(): the hot pointer; the host barrier (its window and
///                            leaders' communicator, collective); the timed synchronize's posted
///                            receives (before the control communicator goes); the subset
///                            communicators in set order (the same on every instance); the sends
///                            nobody waited for (pending_sends(), src/mpi)
///               3. runtime   stop_runtime(): control, host and world duplicates, then
///                            MPI_Finalize if popdist started MPI -- skipped entirely when an
///                            exchange timed out inside MPI (mpi_wedged)
///   Never freed: the ProcessState itself, every published Topology, the entries (moved to a
///   graveyard by release_all so that stale pointers see "not initialized"), the logger.
///
/// What lives outside this struct, and why, is listed in docs/guide/development.md ("State"): the
/// hot path's globals (constant-initialized so that synchronize() reads them without a guard):
///   g_hot (runtime_state.hpp)               initialized, topology: the runtime's hot part
///   g_root_scope_copy (registry/entry.hpp)  copy of registry.root() (with its host barrier)
///   g_mpi_calls_serialized_copy (mpi/mpi_call.hpp)  from runtime.thread_level
/// and the state that cannot be here: per thread (t_innermost_scope, t_last_lookup), below this
/// layer (src/mpi's MPI lock, pending sends and interrupt hook; src/core's logger), and the
/// registry's generation stamp, which the protocols bump too.
struct ProcessState {
  RuntimeState runtime;  ///< layer 2, src/runtime: made by init() first, stopped by finalize() last
  Registry registry;     ///< layer 3, src/registry: built over the runtime, released before it
};

/// The one process state.
ProcessState& process_state();

}  // namespace popdist::detail
