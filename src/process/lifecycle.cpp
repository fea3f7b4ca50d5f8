// init() and finalize() (DESIGN.md 4): the runtime first, then the registry built over it; torn
// down in the reverse order. The order, and the state each step makes, is written once in
// process_state.hpp.
#include <mutex>

#include "popdist/runtime.hpp"
#include "process/process_state.hpp"
#include "runtime/fork_guard.hpp"

namespace popdist {

void init() {
  if (detail::in_forked_child()) detail::throw_forked_child("init");
  auto& state = detail::process_state();
  std::lock_guard<std::mutex> guard(state.runtime.lifecycle_mutex);
  if (detail::g_hot.initialized.load(std::memory_order_acquire)) return;
  detail::install_fork_guard();
  detail::start_runtime(state.runtime);  // leaves nothing half-made when it throws
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

void finalize() {
  if (detail::in_forked_child()) return;  // nothing of MPI belongs to a fork() child (fork_guard.hpp)
  auto& state = detail::process_state();
  std::lock_guard<std::mutex> guard(state.runtime.lifecycle_mutex);
  // MPI only if popdist started it (mpi4py or the host program finalize their own).
  if (detail::g_hot.initialized.exchange(false, std::memory_order_acq_rel)) state.registry.release_all();
  detail::stop_runtime(state.runtime);
}

}  // namespace popdist
