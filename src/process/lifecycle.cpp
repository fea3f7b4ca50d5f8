// The process's life in C++, decided here and nowhere else: init() and finalize() (design.md §4),
// what happens at exit, and how the job is aborted. The runtime keeps the mechanics (MPI's start
// and stop, the on_exit hook that sees the exit status); this file decides their order, and says
// why for each step. The whole order, Python's part included, is drawn in
// docs/guide/development.md ("The process's life"); the state each step makes is listed in
// process_state.hpp.
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "mpi/mpi_call.hpp"
#include "popdist/runtime.hpp"
#include "process/process_state.hpp"
#include "runtime/fork_guard.hpp"
#include "runtime/output_drain.hpp"

namespace popdist {
namespace {

/// How long an aborting instance waits for the launcher to read its output (usually
/// milliseconds; a stopped reader must not keep the job from ending).
constexpr double kOutputDrainSeconds = 1.0;
/// How long it then gives a relay (slurmstepd, Open MPI's daemon) to forward what it read to the
/// launcher before the abort overtakes it (output_drain.cpp).
constexpr double kOutputRelaySeconds = 0.2;

}  // namespace

// init(): 1. the runtime (MPI, popdist's communicators, the cross-instance checks), because
// everything above is built over its communicators; 2. the registry over it; 3. the flag the hot
// paths acquire, last, so that they see both. A failure leaves nothing half-made.
void init() {
  if (detail::in_forked_child()) detail::throw_forked_child("init");  // MPI is the parent's
  auto& state = detail::process_state();
  std::lock_guard<std::mutex> guard(state.runtime.lifecycle_mutex);
  if (detail::g_hot.initialized.load(std::memory_order_acquire)) return;
  detail::install_fork_guard();          // before MPI exists, so that no child can reach it
  detail::start_runtime(state.runtime);  // registers the exit hook once MPI is up (exit_with_status)
  try {
    state.registry.attach(state.runtime);
  } catch (...) {
    state.registry.release_all();
    detail::release_runtime_after_failure(state.runtime, std::current_exception());
    throw;
  }
  detail::g_hot.initialized.store(true, std::memory_order_release);
}

bool is_initialized() noexcept { return detail::g_hot.initialized.load(std::memory_order_acquire); }

// finalize(), the reverse of init(): the flag first (no new call starts), the registry's
// communicators while the runtime's parents still exist, then the runtime, which finalizes MPI
// only if popdist started it (mpi4py or the host program finalize their own).
void finalize() {
  if (detail::in_forked_child()) return;  // nothing of MPI belongs to a fork() child (fork_guard.hpp)
  auto& state = detail::process_state();
  std::lock_guard<std::mutex> guard(state.runtime.lifecycle_mutex);
  if (detail::g_hot.initialized.exchange(false, std::memory_order_acq_rel)) state.registry.release_all();
  detail::stop_runtime(state.runtime);
}

// Abort: the output first (the launcher ends every instance once MPI_Abort reaches it, srun at
// once, and the traceback that explains the abort must have left), then MPI_Abort. A fork()
// child must not abort its parent's job: it ends alone.
void abort_job(int exit_code) noexcept {
  if (!detail::in_forked_child() && detail::mpi_is_usable()) {
    detail::wait_until_output_is_read(kOutputDrainSeconds, kOutputRelaySeconds);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
  }
  std::_Exit(exit_code);
}

namespace detail {

// At exit, with the exit status (the runtime's on_exit hook, after every Python atexit callback
// and framework teardown). A failing status after init() means this instance gives up on the job
// while others may wait for it in a collective: MPI_Finalize would wait for them in turn, and
// neither side would ever return. So the job is aborted with that status instead -- what mpirun
// does when a process exits without finalizing, and what an uncaught Python exception does --
// and only a successful exit finalizes. Only when popdist started MPI: a host program that
// initialized MPI decides its own teardown.
void exit_with_status(int status) noexcept {
  if (in_forked_child()) return;  // the parent's MPI: not this process's to end
  const auto& state = runtime_state();
  if (status != 0 && state.owns_mpi && state.size > 1 && is_initialized() && mpi_is_usable()) {
    // Plain stdio: static objects such as the logger's sinks may already be destroyed at exit.
    std::fflush(stdout);
    std::fprintf(stderr,
                 "popdist: instance %d exits with status %d without finalize(): ending the job (MPI_Abort) rather "
                 "than waiting in MPI_Finalize for instances that may be waiting for this one\n",
                 state.rank, status);
    std::fflush(stderr);
    abort_job(status);
  }
  try {
    finalize();
  } catch (...) {
    // Nothing sensible is left to do at exit; never terminate() from an exit handler.
  }
}

}  // namespace detail
}  // namespace popdist
