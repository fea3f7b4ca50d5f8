#pragma once
// How an attempt ended once mpirun has ended by itself (no stop signal reached popdist run):
// mpirun's status checked against what the agents said. A lost host (host_liveness.hpp, the same
// rule as the watch's, Moment::mpirun_ended) makes the status 122 whatever mpirun said. mpirun's 0
// stands only when every instance whose agent spoke said it ended with 0: one that failed makes it
// 1 (Slurm's --no-kill stops a failed node's instances and mpirun then says 0), and so does one
// that never said how it ended on a host that is not lost -- under --host-timeout 0 that is every
// such instance -- and the report names those. After mpirun's failure its status stands, and the
// instances that never said how they ended are named as the teardown's: most likely killed with
// their agents, still running when the grace period ran out (docs/guide/long-jobs.md). Pure.

#include <chrono>
#include <string>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/supervise/host_liveness.hpp"

namespace popdist::cli {

/// An instance whose agent spoke but never said how it ended.
struct UnreportedInstance {
  int index = 0;
  std::string host;          ///< as the plan names it
  bool in_teardown = false;  ///< after a failure: most likely killed with its agent by the teardown
};

/// The attempt's end as popdist run reports it.
struct AttemptEnd {
  int status = 0;                              ///< the attempt's, as a shell reports it
  std::vector<LostHost> lost;                  ///< the hosts found lost
  std::vector<UnreportedInstance> unreported;  ///< after mpirun's 0 (they fail the attempt), or its failure
};

/// The end of an attempt whose mpirun ended by itself with `mpirun_status`, under the limit of
/// --host-timeout (zero: off).
[[nodiscard]] AttemptEnd judge_attempt_end(int mpirun_status, const LaunchPlan& plan, const Hearing& hearing,
                                           std::chrono::milliseconds limit);

}  // namespace popdist::cli
