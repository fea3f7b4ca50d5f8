#include "validation.hpp"

#include <fmt/format.h>

#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

void require_at_least_one(std::string_view option, int value) {
  if (value < 1) throw UsageError(fmt::format("{} {}: must be at least 1", option, value));
}

std::string names_of(const std::vector<HostSpec>& hosts) {
  std::string names;
  for (std::size_t i = 0; i < hosts.size() && i < 8; ++i) names += (i ? ", " : "") + hosts[i].name;
  if (hosts.size() > 8) names += ", ...";
  return names;
}

}  // namespace

void validate_options(const RunOptions& options) {
  if (options.program.empty()) {
    throw UsageError("no program to run: put it after '--' (popdist run [options] -- program [args...])");
  }
  require_at_least_one("--num-instances", options.num_instances);
  const int replicas = total_replicas(options);
  require_at_least_one("--num-replicas", replicas);
  require_at_least_one("--ipus-per-replica", options.ipus_per_replica);
  if (replicas % options.num_instances != 0) {
    throw UsageError(fmt::format("--num-replicas {} is not divisible by --num-instances {}: every instance drives the "
                                 "same number of replicas (e.g. --num-replicas {})",
                                 replicas, options.num_instances,
                                 (replicas / options.num_instances + 1) * options.num_instances));
  }
  if (!options.host_lists.empty() && !options.hostfile.empty()) {
    throw UsageError(fmt::format("--host and --hostfile '{}' are mutually exclusive: give the hosts one way",
                                 options.hostfile));
  }
  if (const auto only = options.only_output_from_instance;
      only && (*only < 0 || *only >= options.num_instances)) {
    throw UsageError(fmt::format("--only-output-from-instance {}: out of range; the instances are 0..{}", *only,
                                 options.num_instances - 1));
  }
}

void validate_hosts(const RunOptions& options, const std::vector<HostSpec>& hosts, std::string_view source) {
  if (hosts.empty()) return;
  check_unique_hosts(hosts, source);
  const auto num_hosts = static_cast<int>(hosts.size());
  if (options.num_instances % num_hosts != 0) {
    throw UsageError(fmt::format("--num-instances {} is not divisible by the {} host{} of {} ({}): instances are "
                                 "divided evenly among the hosts",
                                 options.num_instances, num_hosts, num_hosts == 1 ? "" : "s", source, names_of(hosts)));
  }
}

}  // namespace popdist::cli
