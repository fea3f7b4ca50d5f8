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

}  // namespace popdist::cli
