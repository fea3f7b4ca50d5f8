#pragma once
// The process-wide state of the MPI runtime (init/finalize), shared by the runtime and the
// registry. One instance, created on first use and never destroyed: MPI must never be touched
// from a static destructor (finalize runs from an exit handler instead).

#include <mpi.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

#include "popdist/grouping.hpp"
#include "popdist/runtime.hpp"

namespace popdist::detail {

struct Entry;
class HostBarrier;

/// The process-wide hot-path state: what synchronize()'s hot path reads, as constant-initialized
/// globals (no function-local static guard, no call). The rules for who may touch it:
///   - `initialized`, `root`, `has_default_timeout`: written by init() and finalize() only, under
///     the runtime's lifecycle mutex; read by anyone (acquire on `initialized` first).
///   - `host_barrier`: made by init() (a collective moment: every instance is there), deleted by
///     finalize() only. Read by the hot path with one acquire load.
/// Nothing else belongs here: state that is not read on every synchronize lives in RuntimeState
/// or in the registry.
struct HotState {
  std::atomic<bool> initialized{false};      ///< between a successful init() and finalize()
  std::atomic<Entry*> root{nullptr};         ///< the registry's root scope
  std::atomic<bool> has_default_timeout{false};  ///< POPDIST_SYNC_TIMEOUT is set
  std::atomic<HostBarrier*> host_barrier{nullptr};  ///< the root scope's host-aware barrier
};
inline HotState g_hot;

struct RuntimeState {
  std::mutex lifecycle_mutex;              ///< init() and finalize()
  bool owns_mpi = false;                   ///< init() called MPI_Init_thread, so finalize() ends MPI
  bool exit_handler_registered = false;
  /// popdist's duplicate of MPI_COMM_WORLD: the world barrier, init's allgather and the parent
  /// of every subset communicator. A duplicate so that popdist's collectives can never match a
  /// host program's on MPI_COMM_WORLD, and so that MPI_ERRORS_RETURN is set only on ours.
  MPI_Comm world = MPI_COMM_NULL;
  /// A second duplicate for point-to-point protocols (handshakes, timed synchronize): their
  /// wildcard receives must never see anything but popdist's own protocol messages.
  MPI_Comm control = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  int tag_ub = 32767;                      ///< MPI_TAG_UB of the world communicator
  std::optional<double> default_timeout;   ///< POPDIST_SYNC_TIMEOUT, parsed by init()
  /// An exchange timed out with collectives still outstanding on popdist's communicators: MPI
  /// cannot be finalized cleanly any more, so finalize() leaves MPI alone (the launcher ends the
  /// job when this process exits).
  bool mpi_wedged = false;
  std::vector<InstanceView> views;         ///< every instance's view, gathered on request
  /// Every instance's replica range: derived under uniform replicas, else gathered by init().
  std::vector<ReplicaRange> ranges;
};

RuntimeState& runtime_state();

/// Throws UsageError "<function>: popdist is not initialized; call popdist.init() ... first".
[[noreturn]] void throw_not_initialized(const char* function);

/// Throws unless init() has completed.
inline void require_initialized(const char* function) {
  if (!g_hot.initialized.load(std::memory_order_acquire)) throw_not_initialized(function);
}

}  // namespace popdist::detail
