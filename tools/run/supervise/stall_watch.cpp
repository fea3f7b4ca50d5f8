#include "run/supervise/stall_watch.hpp"

#include <algorithm>

namespace popdist::cli {

StallWatch::StallWatch(std::function<std::optional<Clock::time_point>()> last_output, std::chrono::milliseconds limit)
    : last_output_(std::move(last_output)), limit_(limit), since_(Clock::now()) {}

bool StallWatch::stalled() {
  if (const auto newest = last_output_()) since_ = std::max(since_, *newest);
  return Clock::now() - since_ >= limit_;
}

void StallWatch::restart() { since_ = Clock::now(); }

Watch stall_watch(StallWatch stall, std::function<void()> report, bool keep_running) {
  return [stall = std::move(stall), report = std::move(report), keep_running](pid_t) mutable
         -> std::optional<WatchVerdict> {
    if (!stall.stalled()) return std::nullopt;
    if (report) report();
    if (!keep_running) return WatchVerdict{kStallStatus, WatchVerdict::Ending::sigterm, {}, {}};
    stall.restart();
    return std::nullopt;
  };
}

}  // namespace popdist::cli
