// placeholder until the topology command lands
#include "topology_command.hpp"
namespace popdist::cli {
std::function<int()> add_topology_command(CLI::App& app) {
  app.add_subcommand("topology", "Print the topology this process would see");
  return [] { return 0; };
}
}  // namespace popdist::cli
