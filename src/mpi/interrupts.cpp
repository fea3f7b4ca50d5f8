#include "mpi/interrupts.hpp"

#include <atomic>

#include "popdist/interrupts.hpp"

namespace popdist {
namespace {
// Globals, not process state: the hook is installed at import (before init(), and across
// re-inits) and read by every bounded wait in this layer, which cannot see the process state.
std::atomic<InterruptCheck> g_check{nullptr};
std::atomic<bool> g_interrupted{false};
}  // namespace

void set_interrupt_check(InterruptCheck check) noexcept { g_check.store(check, std::memory_order_release); }

namespace detail {

void check_interrupts() {
  if (const auto check = g_check.load(std::memory_order_acquire)) {
    try {
      check();
    } catch (...) {
      g_interrupted.store(true, std::memory_order_release);
      throw;
    }
  }
}

bool interrupt_check_installed() noexcept { return g_check.load(std::memory_order_acquire) != nullptr; }

bool wait_was_interrupted() noexcept { return g_interrupted.load(std::memory_order_acquire); }

}  // namespace detail
}  // namespace popdist
