#pragma once
// The command of the chosen backend (launcher_choice.hpp): Open MPI's (mpirun_command.hpp) or
// hydra's (hydra_command.hpp), with argv[0] the launcher's bare name and a line that says which.

#include "job/launch_plan.hpp"
#include "run/launch/launcher_choice.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

/// "hydra: MPICH hydra 4.0.2 at /usr/bin/mpiexec.hydra" (-v, --dry-run, -vv).
[[nodiscard]] std::string describe_launcher(const Launcher& launcher);

/// The launcher's command. Throws UsageError as the backend's builder does, and for srun (not yet
/// driven: docs/guide/launchers.md).
[[nodiscard]] MpirunCommand build_launcher_command(const Launcher& launcher, const LaunchPlan& plan,
                                                   const RunOptions& options, MpirunContext context);

}  // namespace popdist::cli
