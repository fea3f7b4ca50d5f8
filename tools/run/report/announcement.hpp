#pragma once
// What popdist run says before the job starts: the notices (errors were said already; here the
// warnings and ignored PopRun options, the command's own warnings), the OMP_NUM_THREADS notice
// (design.md §12), with -v the hosts, mpirun and every decision, with --print-topology the
// topology table; and the command itself, for --dry-run and -vv.

#include <cstdio>
#include <string>

#include "job/launch_plan.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/plan/prepared_job.hpp"

namespace popdist::cli {

/// The notices and lines before the job starts (or before --dry-run prints the command), for the
/// command `command` and the mpirun found at `mpirun_path`.
void announce(const PreparedJob& job, const MpirunCommand& command, const std::string& mpirun_path);

/// The command on one line (pasteable), then each instance's host and variables, as its agent
/// will set them.
void print_command(std::FILE* out, const MpirunCommand& command, const LaunchPlan& plan,
                   const MpirunContext& context);

}  // namespace popdist::cli
