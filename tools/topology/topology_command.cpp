// `popdist topology` as CLI11 sees it: the subcommand and its options; what runs once they are
// parsed is in topology_main.cpp.
#include "topology/topology_command.hpp"

#include <iostream>
#include <memory>

#include "common/argument_checks.hpp"
#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "topology/init_settings.hpp"
#include "topology/topology_main.hpp"

namespace popdist::cli {

std::function<int()> add_topology_command(CLI::App& app) {
  auto options = std::make_shared<topology_cmd::TopologyOptions>();
  CLI::App* command = app.add_subcommand(
      "topology",
      "Print the topology this process would see: instance, replicas and devices, with the variable that "
      "supplied each field (no MPI is started unless --all is given)");
  command->add_flag("--json", options->json, "Print one JSON object (for tools) instead of the table");
  CLI::Option* env_file =
      command
          ->add_option("--env-file", options->env_file,
                       "Interpret a saved environment (NAME=VALUE lines, '#' comments; '-' reads standard input) "
                       "instead of the live one; only the file's variables count")
          ->type_name("FILE")
          // stat() first: a fifo with no writer would block open() forever, a directory or a
          // device is no environment file.
          ->check(regular_file(true));
  command
      ->add_flag("--all", options->all,
                 "Under a launcher: start MPI, gather every instance's view (host, local index, replicas, devices) "
                 "and print the whole job once, from instance 0")
      ->excludes(env_file);
  command->footer(
      "Exit status: 0 success; 2 usage error (including an unreadable or malformed --env-file); "
      "3 invalid environment or inconsistent job (the error names the variable or the instances); "
      "1 any other failure.\n");
  return [options] {
    if (!options->all) {
      // init()'s own settings, in the environment the command reads (standard input is read once,
      // by the detection itself; an unreadable file is reported by the detection too).
      try {
        EnvLookup env = process_environment();
        if (!options->env_file.empty() && options->env_file != "-") env = lookup_in(read_env_file(options->env_file));
        for (const auto& warning : topology_cmd::check_init_settings(env)) {
          std::cerr << "popdist topology: warning: " << warning << "\n";
        }
      } catch (const EnvironmentError& e) {
        std::cerr << "popdist topology: error: " << e.what() << "\n";
        return static_cast<int>(topology_cmd::exit_invalid_environment);
      } catch (const UsageError&) {
        // run_topology reports an unreadable or malformed file with its usual message
      }
    }
    return topology_cmd::run_topology(*options, std::cin, std::cout, std::cerr);
  };
}

}  // namespace popdist::cli
