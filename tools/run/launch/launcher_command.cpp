#include "run/launch/launcher_command.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "run/launch/hydra_command.hpp"
#include "run/launch/srun_command.hpp"

namespace popdist::cli {

namespace {

// Open MPI's major version from the description its --version gave ("Open MPI 5.0.11"); 0: not Open MPI.
int open_mpi_major(const Launcher& launcher) {
  constexpr std::string_view prefix = "Open MPI ";
  if (launcher.backend != Backend::openmpi || launcher.description.rfind(prefix, 0) != 0) return 0;
  return std::atoi(launcher.description.c_str() + prefix.size());
}

}  // namespace

std::string describe_launcher(const Launcher& launcher) {
  return fmt::format("{}: {} at {}", backend_name(launcher.backend), launcher.description, launcher.path);
}

MpirunCommand build_launcher_command(const Launcher& launcher, const LaunchPlan& plan, const RunOptions& options,
                                     MpirunContext context) {
  context.mpirun = launcher.name;
  context.agents_tag = open_mpi_major(launcher) >= 5;
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
