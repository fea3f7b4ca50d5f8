#pragma once
// After a lost host, with --min-instances: the prepared job (prepared_job.hpp) re-planned on the
// hosts left, as next_attempt.hpp shapes it -- new counts, a new plan, torchrun's master moved to
// the new plan's first host (a fixed one stays) and the channel's address chosen again.

#include <set>
#include <string>

#include "popdist/environment.hpp"
#include "run/plan/next_attempt.hpp"
#include "run/plan/prepared_job.hpp"

namespace popdist::cli {

/// Leaves the hosts in `left_out` (every host lost so far, as the plan names them) out of `job`.
/// Returns next_attempt()'s answer; with a refusal `job` is unchanged.
[[nodiscard]] NextAttempt replan_without(PreparedJob& job, const std::set<std::string>& left_out,
                                         const EnvLookup& env);

}  // namespace popdist::cli
