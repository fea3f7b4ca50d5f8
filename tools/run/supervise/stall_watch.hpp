#pragma once
// --stall-timeout: notices that no instance has written output for a while. Each agent touches
// its instance<i>.alive file in the job directory when its program writes (at most once a second,
// agent/instance_agent.cpp); the newest of those times is the job's last output. Instances on hosts
// that cannot write the job directory are not seen (docs/guide/long-jobs.md).

#include <chrono>
#include <string>

namespace popdist::cli {

class StallWatch {
 public:
  StallWatch(std::string job_dir, std::chrono::milliseconds limit);

  /// True once no output for the limit (counted from the newest .alive time, or from now at
  /// construction or the last restart() when there is none newer).
  [[nodiscard]] bool stalled();

  /// Counts the limit again from now (after a report, when the job keeps running).
  void restart();

 private:
  std::string job_dir_;
  std::chrono::milliseconds limit_;
  std::chrono::system_clock::time_point since_;
};

}  // namespace popdist::cli
