#include "run/mpirun/launcher_command.hpp"

#include <fmt/format.h>

#include "popdist/error.hpp"
#include "run/mpirun/hydra_command.hpp"

namespace popdist::cli {

std::string describe_launcher(const Launcher& launcher) {
  return fmt::format("{}: {} at {}", backend_name(launcher.backend), launcher.description, launcher.path);
}

MpirunCommand build_launcher_command(const Launcher& launcher, const LaunchPlan& plan, const RunOptions& options,
                                     MpirunContext context) {
  context.mpirun = launcher.name;
  MpirunCommand command;
  switch (launcher.backend) {
    case Backend::openmpi: command = build_mpirun_command(plan, options, context); break;
    case Backend::hydra: command = build_hydra_command(plan, options, context); break;
    case Backend::srun:
      throw UsageError(fmt::format("--backend srun: popdist run does not drive Slurm's srun yet (found {}); inside an "
                                   "allocation use --backend openmpi or hydra, whose launchers start their daemons "
                                   "with srun (docs/guide/launchers.md)",
                                   describe_launcher(launcher)));
  }
  command.launcher = describe_launcher(launcher);
  return command;
}

}  // namespace popdist::cli
