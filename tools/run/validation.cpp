#include "validation.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "argument_text.hpp"
#include "popdist/error.hpp"
#include "run_limits.hpp"

namespace popdist::cli {
namespace {

// The parser already holds these bounds; checked again for callers that fill RunOptions themselves.
void require_within(std::string_view option, int value, int max) {
  if (value < 1 || value > max) {
    throw UsageError(fmt::format("{} {}: expected a whole number from 1 to {}", option, value, max));
  }
}

bool is_power_of_two(std::int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

std::string names_of(const std::vector<HostSpec>& hosts) {
  std::string names;
  for (std::size_t i = 0; i < hosts.size() && i < 8; ++i) names += (i ? ", " : "") + hosts[i].name;
  if (hosts.size() > 8) names += ", ...";
  return names;
}

}  // namespace

void validate_options(const RunOptions& options) {
  if (options.program.empty()) {
    throw UsageError("no program to run: give it after the options (popdist run [options] program [args...])");
  }
  if (options.program.front().empty()) {
    throw UsageError("the program name is an empty word ''; expected a program to run (popdist run [options] program "
                     "[args...])");
  }
  if (options.program.front().front() == '-') {
    throw UsageError(fmt::format("{} is not an option of popdist run, and a program name cannot start with '-'",
                                 shown(options.program.front())));
  }
  require_within("--num-instances", options.num_instances, max_instances);
  const int replicas = total_replicas(options);
  require_within("--num-replicas", replicas, max_replicas);
  require_within("--ipus-per-replica", options.ipus_per_replica, max_ipus_per_replica);
  if (replicas % options.num_instances != 0) {
    // 64-bit: the next multiple of up to 2^20 replicas can pass INT_MAX only in int arithmetic.
    const std::int64_t suggestion =
        (static_cast<std::int64_t>(replicas) / options.num_instances + 1) * options.num_instances;
    throw UsageError(fmt::format("--num-replicas {} is not divisible by --num-instances {}: every instance drives the "
                                 "same number of replicas (e.g. --num-replicas {})",
                                 replicas, options.num_instances, suggestion));
  }
  // IPUs are attached in groups of 1, 2, 4, 8, ... devices: an instance's share of the devices
  // must be one such group, or it has no device id.
  const std::int64_t per_instance = static_cast<std::int64_t>(replicas / options.num_instances) * options.ipus_per_replica;
  if (!is_power_of_two(per_instance)) {
    throw UsageError(fmt::format("each instance would drive {} replicas x {} IPUs per replica = {} IPUs, which is not 1 "
                                 "or a power of two (IPUs come in groups of 1, 2, 4, 8, ...): change --num-replicas {}, "
                                 "--num-instances {} or --ipus-per-replica {}",
                                 replicas / options.num_instances, options.ipus_per_replica, per_instance, replicas,
                                 options.num_instances, options.ipus_per_replica));
  }
  if (!options.host_lists.empty() && !options.hostfile.empty()) {
    throw UsageError(fmt::format("--host and --hostfile {} are mutually exclusive: give the hosts one way",
                                 shown(options.hostfile)));
  }
  if (const auto only = options.only_output_from_instance;
      only && (*only < 0 || *only >= options.num_instances)) {
    throw UsageError(fmt::format("--only-output-from-instance {}: out of range; the instances are 0..{}", *only,
                                 options.num_instances - 1));
  }
}

void validate_hosts(const RunOptions& options, const std::vector<HostSpec>& hosts, std::string_view source) {
  if (hosts.empty()) return;
  if (hosts.size() > static_cast<std::size_t>(max_hosts)) {
    throw UsageError(fmt::format("{} names {} hosts, more than the {} that popdist run plans for", source, hosts.size(),
                                 max_hosts));
  }
  check_unique_hosts(hosts, source);
  const auto num_hosts = static_cast<int>(hosts.size());
  if (options.num_instances % num_hosts != 0) {
    throw UsageError(fmt::format("--num-instances {} is not divisible by the {} host{} of {} ({}): instances are "
                                 "divided evenly among the hosts",
                                 options.num_instances, num_hosts, num_hosts == 1 ? "" : "s", source, names_of(hosts)));
  }
}

}  // namespace popdist::cli
