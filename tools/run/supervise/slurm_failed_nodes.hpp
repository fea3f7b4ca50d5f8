#pragma once
// Under srun, a failed attempt whose instances vanished (lost hosts, agents that never said how
// they ended) or were ended by a SIGTERM or SIGKILL from outside: Slurm may have taken a node out
// of service (DOWN, under --no-kill too) and ended the step. Then sinfo is asked once, bounded,
// and the report names that node and Slurm's reason (report/slurm_nodes.hpp); the other nodes'
// instances were ended by Slurm with the step, so only the failed node stays a lost host.

#include <string>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/report/failure_report.hpp"
#include "run/supervise/attempt_end.hpp"

namespace popdist::cli {

/// Whether the attempt's end is one Slurm may have caused: failed, not stopped by a signal to
/// popdist run, with a lost host, an unreported instance, or a failure by SIGTERM or SIGKILL.
[[nodiscard]] bool ended_from_outside(const AttemptEnd& end, const std::vector<Failure>& failures, bool stopped);

/// The report's lines on the plan's nodes Slurm took out of service (empty when none, or when
/// sinfo could not say within 3 s: then `verbose` says why), asked of the Slurm beside `launcher`;
/// `end.lost` narrowed to those nodes when one of them is among it.
[[nodiscard]] std::string explain_by_slurm(const std::string& launcher, const LaunchPlan& plan, AttemptEnd& end,
                                           bool verbose);

}  // namespace popdist::cli
