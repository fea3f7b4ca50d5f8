// `popdist run`: the CLI11 subcommand; the work is in run_job.cpp.
#include "run_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "run_cli.hpp"
#include "run_job.hpp"

namespace popdist::cli {

std::function<int()> add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Launch instances with one mpirun (PopRun-like): popdist run [options] -- program [args...]");
  auto options = std::make_shared<RunOptions>();
  add_run_options(*sub, *options);
  return [sub, options] {
    try {
      check_program_after_separator(*sub, *options);
    } catch (const UsageError& e) {
      fmt::print(stderr, "popdist run: {}\n", e.what());
      return exit_usage;
    }
    return run_job(*options, process_environment());
  };
}

}  // namespace popdist::cli
