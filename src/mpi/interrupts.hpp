#pragma once
// The waits' side of popdist/interrupts.hpp.

#include <chrono>

namespace popdist::detail {

/// Calls the installed interrupt check (it may throw); nothing when none is installed.
void check_interrupts();

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
