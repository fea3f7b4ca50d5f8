#pragma once
// One attempt of a `popdist run` job: a new job directory and channel, the mpirun command, mpirun
// under its watches (lost hosts, a stall, a hang in its teardown: watch.hpp), how the attempt
// ended -- a watch's verdict, or mpirun's status checked against what the agents said
// (attempt_end.hpp) -- and its report (run/report/): the failure block on stderr, --report-file.

#include <string>
#include <vector>

#include "run/plan/prepared_job.hpp"
#include "run/supervise/host_liveness.hpp"

namespace popdist::cli {

/// How one attempt ended: its status, and the hosts found lost.
struct AttemptResult {
  int status = 0;
  std::vector<LostHost> lost;
};

/// Runs attempt `attempt` (from 0) of `job` with the mpirun at `mpirun_path`.
[[nodiscard]] AttemptResult run_attempt(const PreparedJob& job, const std::string& mpirun_path, int attempt);

}  // namespace popdist::cli
