#pragma once
// Checks of `popdist run`'s options that need nothing but the options themselves, done before
// anything starts. Each failure is a UsageError whose message names the option, its value and
// what was expected (the CLI turns it into exit status 2).

#include <string>
#include <string_view>
#include <vector>

#include "run/options/run_options.hpp"
#include "run/plan/host_list.hpp"

namespace popdist::cli {

/// Every problem of the options together, in a fixed order: a program given, counts in range,
/// replicas divisible by instances, an instance's IPUs a power of two, IPUs divisible by
/// --num-ilds, --host/--hostfile exclusive, --only-output-from-instance in 0..instances-1.
/// (The parser already holds the ranges; checked again for callers that fill RunOptions themselves.)
[[nodiscard]] std::vector<std::string> option_problems(const RunOptions& options);

/// Throws UsageError with the first of option_problems().
void validate_options(const RunOptions& options);

/// Instances divisible by the number of hosts (`source` names where the hosts came from, e.g.
/// "--host" or "SLURM_JOB_NODELIST"); no host listed twice.
void validate_hosts(const RunOptions& options, const std::vector<HostSpec>& hosts, std::string_view source);

}  // namespace popdist::cli
