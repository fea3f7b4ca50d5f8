#include "run/supervise/failed_instance_watch.hpp"

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

}  // namespace popdist::cli
