#include "run/supervise/failed_instance_watch.hpp"

#include <optional>

namespace popdist::cli {

Watch failed_instance_watch(std::function<std::optional<int>()> first_failure, std::chrono::milliseconds grace) {
  return [first_failure = std::move(first_failure), grace](pid_t) -> std::optional<WatchVerdict> {
    const auto status = first_failure();
    if (!status) return std::nullopt;
    WatchVerdict verdict;
    verdict.status = *status;
    verdict.ending = WatchVerdict::Ending::sigterm_then_sigkill;
    verdict.grace = grace;
    return verdict;
  };
}

Watch stopped_job_watch(std::function<int()> stop_signal, std::chrono::milliseconds grace) {
  std::optional<std::chrono::steady_clock::time_point> seen;
  return [stop_signal = std::move(stop_signal), grace, seen](pid_t) mutable -> std::optional<WatchVerdict> {
    const int signal_number = stop_signal();
    if (signal_number == 0) return std::nullopt;
    const auto now = std::chrono::steady_clock::now();
    if (!seen) seen = now;
    if (now - *seen < grace) return std::nullopt;
    WatchVerdict verdict;
    verdict.status = 128 + signal_number;
    verdict.ending = WatchVerdict::Ending::sigkill;
    return verdict;
  };
}

Watch bounded_by_grace(Watch watch, std::chrono::milliseconds grace) {
  return [watch = std::move(watch), grace](pid_t launcher) -> std::optional<WatchVerdict> {
    auto verdict = watch(launcher);
    if (verdict && verdict->ending == WatchVerdict::Ending::sigterm) {
      verdict->ending = WatchVerdict::Ending::sigterm_then_sigkill;
      verdict->grace = grace;
    }
    return verdict;
  };
}

}  // namespace popdist::cli
