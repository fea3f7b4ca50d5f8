#include "run/supervise/lost_host_watch.hpp"

#include <fmt/format.h>

#include "common/say.hpp"

namespace popdist::cli {

Watch lost_host_watch(const LaunchPlan& plan, const JobRecords& records, double host_timeout,
                      std::chrono::milliseconds grace) {
  return [&plan, &records, host_timeout, grace](pid_t) -> std::optional<WatchVerdict> {
    auto lost = lost_hosts(Moment::mpirun_running, plan, hearing_now(records), host_timeout_limit(host_timeout));
    if (lost.empty()) return std::nullopt;
    say(fmt::format("lost host {}: not heard from within --host-timeout {} s; ending the attempt", describe_lost(lost),
                    host_timeout));
    return WatchVerdict{kLostHostStatus, WatchVerdict::Ending::sigterm_then_sigkill, grace, std::move(lost)};
  };
}

}  // namespace popdist::cli
