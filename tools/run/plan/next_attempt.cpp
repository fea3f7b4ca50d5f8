#include "run/plan/next_attempt.hpp"

#include <fmt/format.h>

#include "run/options/validation.hpp"

namespace popdist::cli {
namespace {

std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

NextAttempt next_attempt(const RunOptions& options, const std::vector<HostSpec>& hosts,
                         const std::set<std::string>& lost) {
  NextAttempt next;
  next.num_instances = options.num_instances;
  next.num_replicas = total_replicas(options);
  std::set<std::string> known_lost;
  for (const auto& host : hosts) {
    if (lost.count(host.name) != 0) {
      known_lost.insert(host.name);
    } else {
      next.hosts.push_back(host);
    }
  }
  if (known_lost.empty()) {
    next.hosts = hosts;
    return next;
  }
  const auto count = static_cast<int>(hosts.size());
  const int per_host = options.num_instances / count;
  const int replicas_per_instance = total_replicas(options) / options.num_instances;
  next.num_instances = per_host * static_cast<int>(next.hosts.size());
  next.num_replicas = replicas_per_instance * next.num_instances;
  const auto left = fmt::format("{} instance(s) on the {} host(s) left", next.num_instances, next.hosts.size());
  if (!options.min_instances) {
    next.refusal = fmt::format("lost host(s) {}: the job does not shrink without --min-instances (it would have {})",
                               joined(known_lost), left);
  } else if (next.num_instances < *options.min_instances) {
    next.refusal = fmt::format("lost host(s) {}: {} are fewer than --min-instances {}", joined(known_lost), left,
                               *options.min_instances);
  } else {
    // The counts shrink together, so the rules hold unless one depends on the total (--num-ilds).
    const auto problems = option_problems(with_counts(options, next));
    if (!problems.empty()) {
      next.refusal = fmt::format("lost host(s) {}: {} break PopDist's rules: {}", joined(known_lost), left,
                                 problems.front());
    }
  }
  return next;
}

RunOptions with_counts(RunOptions options, const NextAttempt& next) {
  options.num_instances = next.num_instances;
  if (options.num_replicas) options.num_replicas = next.num_replicas;
  return options;
}

}  // namespace popdist::cli
