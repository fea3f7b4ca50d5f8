#pragma once
// The MPI runtime's part of the process-wide state (process/process_state.hpp holds it, with the
// registry's part, in one struct, and writes down the teardown order). The runtime knows nothing
// of the layers above it: init() (process/lifecycle.cpp) starts the runtime, then builds the
// registry over what start_runtime() made.

#include <mpi.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <vector>

#include "popdist/grouping.hpp"
#include "popdist/runtime.hpp"

namespace popdist::detail {

/// What the hot paths read on every call, as constant-initialized globals (no function-local
/// static guard, no call). Written by init() and finalize() only, under the lifecycle mutex;
/// read by anyone (acquire on `initialized` first).
struct HotState {
  std::atomic<bool> initialized{false};          ///< between a successful init() and finalize()
  /// The current topology. Each version is allocated once and never freed, so a reference
  /// handed out by topology() stays valid when init() publishes the refined one.
  std::atomic<const Topology*> topology{nullptr};
};
inline HotState g_hot;

/// POPDIST_CENSUS_AFTER when unset, seconds (protocols/registration/census.hpp).
inline constexpr double kDefaultCensusAfter = 30.0;

/// What init() makes for the layers above it: popdist's communicators, this instance's place in
/// the job, and the host placement (the shared-memory split), plus the runtime's own bookkeeping.
struct RuntimeState {
  std::mutex lifecycle_mutex;              ///< init(), finalize(), instance_views(), survey_job()
  std::mutex topology_mutex;               ///< the first detection (topology())
  bool owns_mpi = false;                   ///< init() called MPI_Init_thread, so finalize() ends MPI
  /// The thread level MPI provides; its hot-path copy is "calls serialized" (mpi/mpi_call.hpp).
  int thread_level = MPI_THREAD_SINGLE;
  bool exit_handler_registered = false;
  /// popdist's duplicate of MPI_COMM_WORLD: the world barrier, init's allgather and the parent
  /// of every subset communicator. A duplicate so that popdist's collectives can never match a
  /// host program's on MPI_COMM_WORLD, and so that MPI_ERRORS_RETURN is set only on ours.
  MPI_Comm world = MPI_COMM_NULL;
  /// A second duplicate for point-to-point protocols (handshakes, timed synchronize): their
  /// wildcard receives must never see anything but popdist's own protocol messages.
  MPI_Comm control = MPI_COMM_NULL;
  /// This host's instances: `world` split by shared memory, ordered by instance index (so its
  /// rank 0 is the host's lowest instance). The ground truth for "same host" (design.md §3.2); the
  /// registry's host barrier is built over it.
  MPI_Comm host = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  int tag_ub = 32767;                      ///< MPI_TAG_UB of the world communicator
  std::optional<double> default_timeout;   ///< POPDIST_SYNC_TIMEOUT, parsed by init()
  /// POPDIST_CENSUS_AFTER, parsed by init(): how long a registration without a timeout waits
  /// before its census (protocols/registration/census.hpp).
  double census_after = kDefaultCensusAfter;
  /// An exchange timed out with collectives still outstanding on popdist's communicators: MPI
  /// cannot be finalized cleanly any more, so finalize() leaves MPI alone (the launcher ends the
  /// job when this process exits).
  bool mpi_wedged = false;
  std::vector<InstanceView> views;         ///< every instance's view, gathered on request
  /// Every instance's replica range: derived under uniform replicas, else gathered by init().
  std::vector<ReplicaRange> ranges;
};

/// The runtime's part of the one process state (defined in process/process_state.cpp).
RuntimeState& runtime_state();

/// init()'s runtime steps: MPI (only if nobody started it), popdist's communicators, the
/// cross-instance checks, the refined topology, the host split. On failure, leaves nothing
/// half-made (release_runtime_after_failure) and rethrows. Call with the lifecycle mutex held.
void start_runtime(RuntimeState& state);
/// After a failure of init() above the runtime: frees what start_runtime() made (unless an
/// exchange timed out inside MPI: then nothing may be touched). Never throws.
void release_runtime_after_failure(RuntimeState& state, const std::exception_ptr& failure) noexcept;
/// finalize()'s runtime steps, after the layers above have let go: popdist's communicators
/// (control, host, world), then MPI if popdist started it. Call with the lifecycle mutex held.
void stop_runtime(RuntimeState& state);

/// The process's exit policy: a failing status after init() aborts the job, anything else
/// finalizes. Run by the on_exit hook start_runtime() registers once MPI is up (only there is the
/// status known); decided, with the rest of the process's life, by the top of the layers
/// (defined in process/lifecycle.cpp), so the runtime names it without knowing what is above.
void exit_with_status(int status) noexcept;

/// The bound of init()'s collective steps: POPDIST_SYNC_TIMEOUT, but never less than
/// init_timeout_floor (timeout_rule.hpp); std::nullopt when unset or unparsable (reported later
/// by init()).
[[nodiscard]] std::optional<double> init_timeout();

/// Throws UsageError "<function>: popdist is not initialized; call popdist.init() ... first".
[[noreturn]] void throw_not_initialized(const char* function);

/// Throws unless init() has completed.
inline void require_initialized(const char* function) {
  if (!g_hot.initialized.load(std::memory_order_acquire)) throw_not_initialized(function);
}

}  // namespace popdist::detail
