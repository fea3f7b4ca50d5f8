#pragma once
// What the lost-host tests share: a plan over h1, h2, ..., agents' records, a fixed clock.
#include <chrono>
#include <string>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/supervise/host_liveness.hpp"

namespace liveness_support {

using Clock = std::chrono::steady_clock;

/// An hour into the steady clock: far from its epoch, so that "heard 10 s ago" is a time.
inline const Clock::time_point kNow = Clock::time_point{} + std::chrono::hours(1);

/// Instance `index`, started, its agent heard through the relay named `host`.
inline popdist::cli::InstanceRecord running(int index, const std::string& host) {
  popdist::cli::InstanceRecord record;
  record.index = index;
  record.host = host;
  record.started = true;
  return record;
}

/// `record` ended with `status` `ago` before kNow.
inline popdist::cli::InstanceRecord ended(popdist::cli::InstanceRecord record, int status,
                                          std::chrono::milliseconds ago) {
  record.status = status;
  record.ended_at = kNow - ago;
  return record;
}

/// h1, h2, ... without --host slots.
inline std::vector<popdist::cli::HostSpec> hosts(int count) {
  std::vector<popdist::cli::HostSpec> specs;
  for (int i = 1; i <= count; ++i) specs.push_back({"h" + std::to_string(i), std::nullopt});
  return specs;
}

/// 4 instances on h1 (relay n1: instances 0, 1) and h2 (relay n2: 2, 3), all running, n1 heard
/// 0.5 s ago and n2 `n2_silent` ago.
inline popdist::cli::Hearing two_hosts(std::chrono::milliseconds n2_silent) {
  return {{running(0, "n1"), running(1, "n1"), running(2, "n2"), running(3, "n2")},
          {{"n1", kNow - std::chrono::milliseconds(500)}, {"n2", kNow - n2_silent}},
          kNow};
}

}  // namespace liveness_support
