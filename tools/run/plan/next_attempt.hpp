#pragma once
// After a host was lost (--host-timeout), what the next attempt of --max-restarts runs on: the
// hosts left, with the same instances per host and the same replicas per instance, so every
// instance's share of devices and work is unchanged and only the counts shrink (torchrun's
// --nnodes MIN:MAX, Horovod's --min-np). Without --min-instances, or below it, the job does
// not shrink: the answer is a refusal that says why. Pure: counts and names in, counts out.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

/// The next attempt's shape, or why there is none.
struct NextAttempt {
  std::vector<HostSpec> hosts;  ///< the hosts left, in the order given
  int num_instances = 0;
  int num_replicas = 0;
  std::string refusal;          ///< non-empty: no next attempt, and why
};

/// The next attempt of a job that ran `options` on `hosts` (every host given, lost ones
/// included) once the hosts in `lost` are left out. With nothing lost: the same counts.
[[nodiscard]] NextAttempt next_attempt(const RunOptions& options, const std::vector<HostSpec>& hosts,
                                       const std::set<std::string>& lost);

/// `options` with the counts of `next` (what the next attempt validates and plans).
[[nodiscard]] RunOptions with_counts(RunOptions options, const NextAttempt& next);

}  // namespace popdist::cli
