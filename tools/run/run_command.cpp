// placeholder until the run command lands
#include "run_command.hpp"
namespace popdist::cli {
std::function<int()> add_run_command(CLI::App& app) {
  app.add_subcommand("run", "Launch a job with mpirun");
  return [] { return 0; };
}
}  // namespace popdist::cli
