#include "runtime/watchdog.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "popdist/timeout_rule.hpp"

namespace popdist::detail {

Watchdog::Watchdog(std::optional<double> seconds, std::string what, std::string cause) {
  if (!seconds) return;
  const auto limit = std::chrono::duration<double>(std::min(*seconds, 1e9));
  thread_ = std::thread([this, limit, seconds = *seconds, what = std::move(what), cause = std::move(cause)] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_changed_.wait_for(lock, limit, [this] { return done_; })) return;
    // One write(2), not stdio or the logger: the main thread is inside MPI and may hold locks.
    const auto text = fmt::format("popdist: init: waited {} s (POPDIST_SYNC_TIMEOUT, at least {:g} s in init()) for {}; {}, "
                                  "and MPI does not return without it: ending this process (exit status {})\n",
                                  seconds, init_timeout_floor, what, cause, kExitStatus);
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, text.data(), text.size());
    std::_Exit(kExitStatus);
  });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_changed_.notify_all();
  thread_.join();
}

}  // namespace popdist::detail
