#include "run/launch/launcher_command.hpp"

#include <fmt/format.h>

#include "run/launch/hydra_command.hpp"
#include "run/launch/srun_command.hpp"

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
    case Backend::srun: command = build_srun_command(plan, options, context); break;
  }
  command.launcher = describe_launcher(launcher);
  return command;
}

}  // namespace popdist::cli
