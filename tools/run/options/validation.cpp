#include "run/options/validation.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "common/argument_text.hpp"
#include "job/run_limits.hpp"
#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

bool is_power_of_two(std::int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

std::string names_of(const std::vector<HostSpec>& hosts) {
  std::string names;
  for (std::size_t i = 0; i < hosts.size() && i < 8; ++i) names += (i ? ", " : "") + hosts[i].name;
  if (hosts.size() > 8) names += ", ...";
  return names;
}

/// --min-instances: it shrinks the job between the attempts of --max-restarts, after a host
/// that --host-timeout found lost.
void restart_problems(const RunOptions& options, std::vector<std::string>& problems) {
  if (!options.min_instances) return;
  const int min = *options.min_instances;
  if (options.max_restarts == 0) {
    problems.push_back(fmt::format("--min-instances {} needs --max-restarts N (the attempts that may run on fewer hosts)", min));
  }
  if (min > options.num_instances) {
    problems.push_back(fmt::format("--min-instances {}: expected at most --num-instances {}", min, options.num_instances));
  }
  if (options.host_timeout == 0) {
    problems.push_back(fmt::format("--min-instances {} needs --host-timeout S > 0 (how a host is found lost)", min));
  }
}

}  // namespace

std::vector<std::string> option_problems(const RunOptions& options) {
  std::vector<std::string> problems;
  if (options.program.empty()) {
    problems.emplace_back("no program to run: give it after the options (popdist run [options] program [args...])");
  } else if (options.program.front().empty()) {
    problems.emplace_back("the program name is an empty word ''; expected a program to run (popdist run [options] "
                          "program [args...])");
  } else if (options.program.front().front() == '-') {
    problems.push_back(fmt::format("{} is not an option of popdist run, and a program name cannot start with '-'",
                                   shown(options.program.front())));
  }
  if (options.tee && options.log_dir.empty()) {
    problems.emplace_back("--tee needs --log-dir DIR (the files to write besides the terminal)");
  }
  if (options.stall_keep_running && !options.stall_timeout) {
    problems.emplace_back("--stall-keep-running needs --stall-timeout S (when to report)");
  }
  restart_problems(options, problems);
  const int replicas = total_replicas(options);
  const auto out_of_range = [&problems](std::string_view option, int value, int max) {
    if (value >= 1 && value <= max) return false;
    problems.push_back(fmt::format("{} {}: expected a whole number from 1 to {}", option, value, max));
    return true;
  };
  // Each range is checked (and reported) before the arithmetic that needs it.
  const bool bad_instances = out_of_range("--num-instances", options.num_instances, kMaxInstances);
  const bool bad_replicas = out_of_range("--num-replicas", replicas, kMaxReplicas);
  const bool bad_ipus = out_of_range("--ipus-per-replica", options.ipus_per_replica, kMaxIpusPerReplica);
  if (!bad_instances && !bad_replicas && replicas % options.num_instances != 0) {
    // 64-bit: the next multiple of up to 2^20 replicas can pass INT_MAX only in int arithmetic.
    const std::int64_t suggestion =
        (static_cast<std::int64_t>(replicas) / options.num_instances + 1) * options.num_instances;
    problems.push_back(fmt::format("--num-replicas {} is not divisible by --num-instances {}: every instance drives "
                                   "the same number of replicas (e.g. --num-replicas {})",
                                   replicas, options.num_instances, suggestion));
  } else if (!bad_instances && !bad_replicas && !bad_ipus) {
    // IPUs are attached in groups of 1, 2, 4, 8, ... devices: an instance's share of the devices
    // must be one such group, or it has no device id.
    const std::int64_t per_instance =
        static_cast<std::int64_t>(replicas / options.num_instances) * options.ipus_per_replica;
    if (!is_power_of_two(per_instance)) {
      problems.push_back(fmt::format(
          "each instance would drive {} replicas x {} IPUs per replica = {} IPUs, which is not 1 or a power of two "
          "(IPUs come in groups of 1, 2, 4, 8, ...): change --num-replicas {}, --num-instances {} or "
          "--ipus-per-replica {}",
          replicas / options.num_instances, options.ipus_per_replica, per_instance, replicas, options.num_instances,
          options.ipus_per_replica));
    }
  }
  if (options.num_ilds && !bad_replicas && !bad_ipus) {
    // PopRun's partition has replicas x IPUs per replica devices, split evenly into the domains.
    const std::int64_t devices = static_cast<std::int64_t>(replicas) * options.ipus_per_replica;
    if (*options.num_ilds < 1 || devices % *options.num_ilds != 0) {
      problems.push_back(fmt::format("--num-ilds {}: the {} IPUs of the job ({} replicas x {} IPUs per replica) do "
                                     "not divide into {} IPU-Link domains of equal size",
                                     *options.num_ilds, devices, replicas, options.ipus_per_replica,
                                     *options.num_ilds));
    }
  }
  if (!options.host_lists.empty() && !options.hostfile.empty()) {
    problems.push_back(fmt::format("--host and --hostfile {} are mutually exclusive: give the hosts one way",
                                   shown(options.hostfile)));
  }
  if (const auto only = options.only_output_from_instance;
      only && !bad_instances && (*only < 0 || *only >= options.num_instances)) {
    problems.push_back(fmt::format("--only-output-from-instance {}: out of range; the instances are 0..{}", *only,
                                   options.num_instances - 1));
  }
  return problems;
}

void validate_options(const RunOptions& options) {
  const auto problems = option_problems(options);
  if (!problems.empty()) throw UsageError(problems.front());
}

void validate_hosts(const RunOptions& options, const std::vector<HostSpec>& hosts, std::string_view source) {
  if (hosts.empty()) return;
  if (hosts.size() > static_cast<std::size_t>(kMaxHosts)) {
    throw UsageError(fmt::format("{} names {} hosts, more than the {} that popdist run plans for", source, hosts.size(),
                                 kMaxHosts));
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
