// The `popdist` command: `popdist topology`, `popdist run` and `popdist stacks` (where the Python
// instances of a running `popdist run` job are).
// Arguments are parsed before anything touches MPI, so --help and --version work anywhere.
// Exit status: 0 success, 2 usage error (CLI11), 3 invalid environment/topology, other values
// from the subcommand (`run` returns the job's status).
#include <CLI/CLI.hpp>

#include <iostream>

#include "agent/instance_command.hpp"
#include "common/argument_checks.hpp"
#include "job/agent_line.hpp"
#include "job/reach_line.hpp"
#include "popdist/popdist.hpp"
#include "reach/reach_command.hpp"
#include "run/options/run_command.hpp"
#include "run/options/run_line.hpp"
#include "run/run_main.hpp"
#include "stacks/stacks_command.hpp"
#include "topology/topology_command.hpp"

namespace {

constexpr const char* kDescription = "popdist: the distribution context of MPI-launched jobs (who am I, how many are we)";

/// CLI11's parse: -1 when the line parsed, else the exit status. CLI11 returns 0 for
/// --help/--version and its own code (>0) for usage errors; we map every usage error to 2, as
/// getopt-style tools do.
int parse(CLI::App& app, int argc, char** argv) {
  app.set_version_flag("--version", std::string("popdist ") + popdist::version());
  app.require_subcommand(1);
  app.failure_message(popdist::cli::failure_message);
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string subcommand = argc >= 2 ? argv[1] : "";
  // `popdist run` reads its own line so that one run reports every problem of it (run/options/run_line.hpp);
  // CLI11 below still prints its --help. Declaring every subcommand's options is most of a start
  // (tests/bench/README.md): run and the agent, on every job's path, declare only their own.
  if (subcommand == "run") {
    auto line = popdist::cli::parse_run_line(std::vector<std::string>(argv + 2, argv + argc));
    if (!line.help) return popdist::cli::run_job(line.options, popdist::process_environment());
  }
  CLI::App app{kDescription, "popdist"};
  if (subcommand == popdist::cli::kInstanceCommand) {
    const auto run_instance = popdist::cli::add_instance_command(app);
    const int status = parse(app, argc, argv);
    return status >= 0 ? status : run_instance();
  }
  const auto run_topology = popdist::cli::add_topology_command(app);
  const auto run_run = popdist::cli::add_run_command(app);
  const auto run_instance = popdist::cli::add_instance_command(app);
  const auto run_stacks = popdist::cli::add_stacks_command(app);
  const auto run_reach = popdist::cli::add_reach_command(app);
  if (const int status = parse(app, argc, argv); status >= 0) return status;
  if (app.got_subcommand("topology")) return run_topology();
  if (app.got_subcommand(popdist::cli::kInstanceCommand)) return run_instance();
  if (app.got_subcommand("stacks")) return run_stacks();
  if (app.got_subcommand(popdist::cli::kReachCommand)) return run_reach();
  return run_run();
}
