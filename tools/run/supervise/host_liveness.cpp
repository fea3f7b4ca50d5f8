#include "run/supervise/host_liveness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "job/host_fence_settings.hpp"

namespace popdist::cli {
namespace {

/// Per plan host with a running instance that has spoken: the instances and when it was last heard.
struct Candidate {
  std::vector<int> instances;
  SteadyTime heard{};
};

std::map<int, Candidate> watched_hosts(const LaunchPlan& plan, const Hearing& hearing) {
  std::map<int, Candidate> hosts;
  for (const auto& record : hearing.records) {
    const auto index = static_cast<std::size_t>(record.index);
    if (record.status || record.host.empty() || index >= plan.instances.size()) continue;
    auto& candidate = hosts[plan.instances[index].host];
    candidate.instances.push_back(record.index);
    const auto seen = hearing.heard.find(record.host);
    if (seen != hearing.heard.end()) candidate.heard = std::max(candidate.heard, seen->second);
  }
  return hosts;
}

/// When the first instance said it ended (on popdist run's clock); nullopt when none did.
std::optional<SteadyTime> first_end(const std::vector<InstanceRecord>& records) {
  std::optional<SteadyTime> first;
  for (const auto& record : records) {
    if (record.status && (!first || record.ended_at < *first)) first = record.ended_at;
  }
  return first;
}

}  // namespace

Hearing hearing_now(const JobRecords& records) {
  return {records.snapshot(), records.last_heard(), std::chrono::steady_clock::now()};
}

std::chrono::milliseconds host_timeout_limit(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

std::vector<LostHost> lost_hosts(Moment moment, const LaunchPlan& plan, const Hearing& hearing,
                                 std::chrono::milliseconds limit) {
  if (limit.count() <= 0) return {};
  const auto ended = moment == Moment::mpirun_ended ? first_end(hearing.records) : std::nullopt;
  std::vector<LostHost> lost;
  for (const auto& [host, candidate] : watched_hosts(plan, hearing)) {
    const bool silent = moment == Moment::mpirun_running ? hearing.now - candidate.heard >= limit
                                                         : !ended || candidate.heard < *ended;
    if (silent) {
      lost.push_back({plan.hosts[static_cast<std::size_t>(host)].name, candidate.instances,
                      std::chrono::duration_cast<std::chrono::milliseconds>(hearing.now - candidate.heard)});
    }
  }
  return lost;
}

void add_fence_variables(MpirunContext& context, double host_timeout, int grace_period) {
  for (auto& variable : fence_exports(host_timeout, grace_period)) context.exports.push_back(std::move(variable));
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
