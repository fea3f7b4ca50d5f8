#include "mpi/interrupts.hpp"

#include <atomic>

#include "popdist/interrupts.hpp"

namespace popdist {
namespace {
std::atomic<InterruptCheck> g_check{nullptr};
}  // namespace

void set_interrupt_check(InterruptCheck check) noexcept { g_check.store(check, std::memory_order_release); }

namespace detail {

void check_interrupts() {
  if (const auto check = g_check.load(std::memory_order_acquire)) check();
}

}  // namespace detail
}  // namespace popdist
