#pragma once
// The waits' side of popdist/interrupts.hpp.

#include <chrono>

namespace popdist::detail {

/// Calls the installed interrupt check (it may throw); nothing when none is installed. When the
/// check throws, the wait it interrupted is abandoned with MPI requests still outstanding:
/// wait_was_interrupted() says so from then on.
void check_interrupts();

/// True when a check is installed (the Python module installs one): waits that MPI would block
/// in without a look at signals (MPI_Barrier, MPI_Waitall) poll instead.
[[nodiscard]] bool interrupt_check_installed() noexcept;

/// True once a check has thrown inside a wait in this process: a collective was left behind,
/// so MPI must not be finalized or have its communicators freed collectively (as after a
/// timeout).
[[nodiscard]] bool wait_was_interrupted() noexcept;

/// For a waiting loop: calls check_interrupts() when kEvery has passed since the last call.
class InterruptPoll {
 public:
  static constexpr auto kEvery = std::chrono::milliseconds(50);
  /// Called only once the loop sleeps, so a wait that completes while spinning reads no clock.
  void operator()() {
    const auto now = std::chrono::steady_clock::now();
    if (last_ == std::chrono::steady_clock::time_point{}) last_ = now;  // the first sleep
    if (now - last_ < kEvery) return;
    last_ = now;
    check_interrupts();
  }

 private:
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace popdist::detail
