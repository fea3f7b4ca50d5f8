#pragma once
// --stall-timeout: notices that no instance has written output for a while. Each agent, on every
// host, sends an Activity message over the job's channel when its program writes (at most once a
// second, agent/instance_agent.cpp); the newest of those times (job_records.hpp, on popdist run's
// clock) is the job's last output.

#include <chrono>
#include <functional>
#include <optional>

namespace popdist::cli {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  /// `last_output`: the newest output of any instance, nullopt before any.
  StallWatch(std::function<std::optional<Clock::time_point>()> last_output, std::chrono::milliseconds limit);

  /// True once no output for the limit (counted from the newest output, or from now at
  /// construction or the last restart() when there is none newer).
  [[nodiscard]] bool stalled();

  /// Counts the limit again from now (after a report, when the job keeps running).
  void restart();

 private:
  std::function<std::optional<Clock::time_point>()> last_output_;
  std::chrono::milliseconds limit_;
  Clock::time_point since_;
};

}  // namespace popdist::cli
