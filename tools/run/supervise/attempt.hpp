#pragma once
// One attempt of a `popdist run` job: a new job directory and channel, the launcher's command, the
// launcher under its watches (lost hosts, a stall, a hang in its teardown, and under hydra a failed
// instance: watch.hpp), how the attempt
// ended -- a watch's verdict, or mpirun's status checked against what the agents said
// (attempt_end.hpp) -- and its report (run/report/): the failure block on stderr, --report-file.

#include <string>
#include <vector>

#include "run/launch/launcher_choice.hpp"
#include "run/plan/prepared_job.hpp"
#include "run/supervise/host_liveness.hpp"

namespace popdist::cli {

/// How one attempt ended: its status, and the hosts found lost.
struct AttemptResult {
  int status = 0;
  std::vector<LostHost> lost;
};

/// Runs attempt `attempt` (from 0) of `job` with `launcher` (launcher_choice.hpp).
[[nodiscard]] AttemptResult run_attempt(const PreparedJob& job, const Launcher& launcher, int attempt);

}  // namespace popdist::cli
