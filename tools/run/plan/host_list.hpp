#pragma once
// Host lists as people write them: `node[0-2,4],gpu5`, with an optional slot count `host:4`.
// The bracket syntax is Slurm's compressed hostlist (zero padding kept: `n[01-03]` -> n01 n02
// n03; several bracket groups multiply: `r[1-2]n[1-2]`), so the same code expands
// SLURM_JOB_NODELIST. Pure: no I/O.

#include <string>
#include <string_view>
#include <vector>

#include "job/launch_plan.hpp"  // HostSpec

namespace popdist::cli {

/// Expands one Slurm-style hostlist (`node[01-04,7],gpu5`) into host names, in order.
/// `what` names the source in error messages (e.g. "--host" or "SLURM_JOB_NODELIST").
/// Throws UsageError naming `what`, the value and the problem (unbalanced bracket, empty name,
/// a range that runs backwards, a non-decimal bound, more than 100000 names).
[[nodiscard]] std::vector<std::string> expand_hostlist(std::string_view value, std::string_view what);

/// Parses a --host value: a hostlist whose items may end in `:slots` (slots >= 1); the slot
/// count applies to every name the item expands to (`n[1-2]:4`).
[[nodiscard]] std::vector<HostSpec> parse_host_list(std::string_view value, std::string_view what = "--host");

/// Throws UsageError when a host appears twice (naming it and `what`): instances are divided
/// evenly among distinct hosts, so a repeated name is a mistake rather than extra slots.
void check_unique_hosts(const std::vector<HostSpec>& hosts, std::string_view what);

}  // namespace popdist::cli
