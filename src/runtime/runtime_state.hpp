#pragma once
// The process-wide state of the MPI runtime (init/finalize), shared by the runtime and the
// registry. One instance, created on first use and never destroyed: MPI must never be touched
// from a static destructor (finalize runs from an atexit handler instead).

#include <mpi.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

#include "popdist/grouping.hpp"
#include "popdist/runtime.hpp"

namespace popdist::detail {

struct Entry;

/// What synchronize()'s hot path reads, as constant-initialized globals (no function-local
/// static guard, no call): set by init() and finalize() only.
struct HotState {
  std::atomic<bool> initialized{false};      ///< between a successful init() and finalize()
  std::atomic<Entry*> root{nullptr};         ///< the registry's root scope
  std::atomic<bool> has_default_timeout{false};  ///< POPDIST_SYNC_TIMEOUT is set
};
inline HotState g_hot;

struct RuntimeState {
  std::mutex lifecycle_mutex;              ///< init() and finalize()
  bool owns_mpi = false;                   ///< init() called MPI_Init_thread, so finalize() ends MPI
  bool atexit_registered = false;
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
  std::vector<InstanceView> views;         ///< every instance's view, by instance index
  std::vector<ReplicaRange> ranges;        ///< every instance's replica range
};

RuntimeState& runtime_state();

/// Throws UsageError "<function>: popdist is not initialized; call popdist.init() ... first".
[[noreturn]] void throw_not_initialized(const char* function);

/// Throws unless init() has completed.
inline void require_initialized(const char* function) {
  if (!g_hot.initialized.load(std::memory_order_acquire)) throw_not_initialized(function);
}

}  // namespace popdist::detail
