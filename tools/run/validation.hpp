#pragma once
// Checks of `popdist run`'s options that need nothing but the options themselves, done before
// anything starts. Each failure is a UsageError whose message names the option, its value and
// what was expected (the CLI turns it into exit status 2).

#include <string_view>
#include <vector>

#include "host_list.hpp"
#include "run_options.hpp"

namespace popdist::cli {

/// Counts >= 1, replicas divisible by instances, --host/--hostfile exclusive, a program given,
/// --only-output-from-instance in 0..instances-1.
void validate_options(const RunOptions& options);

/// Instances divisible by the number of hosts (`source` names where the hosts came from, e.g.
/// "--host" or "SLURM_JOB_NODELIST"); no host listed twice.
void validate_hosts(const RunOptions& options, const std::vector<HostSpec>& hosts, std::string_view source);

}  // namespace popdist::cli
