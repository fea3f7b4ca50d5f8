#include "run/supervise/host_liveness.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace popdist::cli {
namespace {

/// Per plan host with a running instance that has spoken: the instances and when it was last heard.
struct Candidate {
  std::vector<int> instances;
  SteadyTime heard{};
};

std::map<int, Candidate> running_hosts(const LaunchPlan& plan, const std::vector<InstanceRecord>& records,
                                       const std::map<std::string, SteadyTime>& heard) {
  std::map<int, Candidate> hosts;
  for (const auto& record : records) {
    const auto index = static_cast<std::size_t>(record.index);
    if (record.status || record.host.empty() || index >= plan.instances.size()) continue;
    auto& candidate = hosts[plan.instances[index].host];
    candidate.instances.push_back(record.index);
    const auto seen = heard.find(record.host);
    if (seen != heard.end()) candidate.heard = std::max(candidate.heard, seen->second);
  }
  return hosts;
}

LostHost lost_host(const LaunchPlan& plan, int host, const Candidate& candidate, SteadyTime now) {
  return {plan.hosts[static_cast<std::size_t>(host)].name, candidate.instances,
          std::chrono::duration_cast<std::chrono::milliseconds>(now - candidate.heard)};
}

}  // namespace

std::vector<LostHost> silent_hosts(const LaunchPlan& plan, const std::vector<InstanceRecord>& records,
                                   const std::map<std::string, SteadyTime>& heard, SteadyTime now,
                                   std::chrono::milliseconds limit) {
  std::vector<LostHost> lost;
  for (const auto& [host, candidate] : running_hosts(plan, records, heard)) {
    if (now - candidate.heard >= limit) lost.push_back(lost_host(plan, host, candidate, now));
  }
  return lost;
}

std::vector<LostHost> hosts_gone_before_the_end(const LaunchPlan& plan, const std::vector<InstanceRecord>& records,
                                                const std::map<std::string, SteadyTime>& heard, SteadyTime now) {
  std::optional<SteadyTime> first_end;
  for (const auto& record : records) {
    if (record.status && (!first_end || record.ended_at < *first_end)) first_end = record.ended_at;
  }
  std::vector<LostHost> lost;
  for (const auto& [host, candidate] : running_hosts(plan, records, heard)) {
    if (!first_end || candidate.heard < *first_end) lost.push_back(lost_host(plan, host, candidate, now));
  }
  return lost;
}

std::string describe_lost(const std::vector<LostHost>& lost) {
  std::string text;
  for (const auto& host : lost) {
    text += fmt::format("{}{} (instance{} {}; last heard {:.1f} s ago)", text.empty() ? "" : ", ", host.host,
                        host.instances.size() == 1 ? "" : "s", fmt::join(host.instances, ", "),
                        std::chrono::duration<double>(host.silent).count());
  }
  return text;
}

}  // namespace popdist::cli
