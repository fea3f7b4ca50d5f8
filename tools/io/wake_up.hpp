#pragma once
// How another thread wakes a poll() loop that waits on sockets: an eventfd that any thread
// signals and the loop watches (and drains). The channel's server and relays take work from other
// threads this way, and popdist run's stack query is told to stop.

#include "io/fd.hpp"

namespace popdist::cli::io {

class WakeUp {
 public:
  /// Throws std::system_error when the kernel gives no eventfd.
  WakeUp();
  /// Any thread, any number of times before the loop drains: one wake-up.
  void signal() noexcept;
  void drain() noexcept;
  /// What the loop polls for POLLIN.
  [[nodiscard]] int fd() const { return fd_.get(); }

 private:
  Fd fd_;
};

}  // namespace popdist::cli::io
