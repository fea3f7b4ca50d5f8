#include "runtime/fork_guard.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>

#include "popdist/error.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {
namespace {

std::atomic<bool> g_forked_child{false};
std::atomic<pid_t> g_instance_pid{0};  // the process that called init()

// Runs in the child right after fork(): async-signal-safe stores only. Clearing `initialized`
// sends every MPI-using call to the not-initialized path, which names the fork (no cost on the
// hot path: it reads that flag anyway).
void mark_child() noexcept {
  g_forked_child.store(true, std::memory_order_relaxed);
  g_hot.initialized.store(false, std::memory_order_release);
}

}  // namespace

void install_fork_guard() noexcept {
  g_instance_pid.store(getpid(), std::memory_order_relaxed);
  static const int installed = pthread_atfork(nullptr, nullptr, mark_child);
  (void)installed;
}

bool in_forked_child() noexcept { return g_forked_child.load(std::memory_order_relaxed); }

void throw_forked_child(const char* function) {
  throw UsageError(fmt::format(
      "{}: this process (pid {}) is a fork() child of a popdist instance (pid {}); it is not a member of the MPI job, "
      "so popdist's collectives and MPI calls are not available here (the getters are). Let the parent make them, "
      "or start new instances with the launcher",
      function, getpid(), g_instance_pid.load(std::memory_order_relaxed)));
}

}  // namespace popdist::detail
