// `popdist run`: the CLI11 subcommand; the work is in run_job.cpp.
#include "run_command.hpp"

#include <memory>

#include "popdist/environment.hpp"
#include "run_cli.hpp"
#include "run_job.hpp"
#include "whole_lines.hpp"

namespace popdist::cli {

std::function<int()> add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Launch instances with one mpirun (PopRun-like): popdist run [options] program [args...]");
  auto options = std::make_shared<RunOptions>();
  add_run_options(*sub, *options);
  return [options] {
    return run_job(*options, process_environment());
  };
}

std::function<int()> add_whole_lines_command(CLI::App& app) {
  auto* sub = app.add_subcommand(whole_lines_command, "Run a program, passing its output on in whole lines");
  sub->group("");  // hidden: only `popdist run` writes it, on the instances' command lines
  sub->positionals_at_end();
  auto program = std::make_shared<std::vector<std::string>>();
  sub->add_option("program", *program, "The program and its arguments")->required();
  return [program] { return run_with_whole_lines(*program); };
}

}  // namespace popdist::cli
