#pragma once
// --stall-timeout: notices that no instance has written output for a while. Each agent, on every
// host, sends an Activity message over the job's channel when its program writes (at most once a
// second, agent/instance_agent.cpp); the newest of those times (job_records.hpp, on popdist run's
// clock) is the job's last output. StallWatch keeps the count; stall_watch() is the watch that
// process_runner.hpp polls (watch.hpp).

#include <chrono>
#include <functional>
#include <optional>

#include "run/supervise/watch.hpp"

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

/// The stall as a watch: once StallWatch finds a stall, `report` runs (where each instance is);
/// then the verdict ends the attempt -- SIGTERM to mpirun, which ends every instance within the
/// grace period, status kStallStatus -- unless `keep_running`: then nothing ends and the limit
/// counts again.
[[nodiscard]] Watch stall_watch(StallWatch stall, std::function<void()> report, bool keep_running);

}  // namespace popdist::cli
