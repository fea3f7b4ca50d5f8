#include "run/plan/host_source.hpp"

#include <fmt/format.h>

#include "popdist/error.hpp"
#include "popdist/slurm_tasks.hpp"
#include "run/plan/hostfile.hpp"

namespace popdist::cli {

std::optional<std::vector<HostSpec>> hosts_from_slurm(const EnvLookup& env) {
  const auto nodelist = env("SLURM_JOB_NODELIST");
  if (!nodelist || nodelist->empty()) return std::nullopt;
  std::vector<HostSpec> hosts;
  for (auto& name : expand_hostlist(*nodelist, "SLURM_JOB_NODELIST")) hosts.push_back({std::move(name), {}});
  if (const auto tasks = env("SLURM_TASKS_PER_NODE"); tasks && !tasks->empty()) {
    try {
      const SlurmTasksPerNode per_node("SLURM_TASKS_PER_NODE", *tasks);
      if (per_node.num_nodes() != static_cast<std::int64_t>(hosts.size())) {
        throw UsageError(fmt::format("SLURM_TASKS_PER_NODE '{}' describes {} nodes but SLURM_JOB_NODELIST '{}' names {}",
                                     *tasks, per_node.num_nodes(), *nodelist, hosts.size()));
      }
      for (std::size_t i = 0; i < hosts.size(); ++i) hosts[i].slots = per_node.tasks_on_node(static_cast<std::int64_t>(i));
    } catch (const EnvironmentError& e) {
      throw UsageError(e.what());
    }
  }
  return hosts;
}

HostSelection select_hosts(const RunOptions& options, const EnvLookup& env) {
  HostSelection selection;
  if (!options.host_lists.empty()) {
    for (const auto& list : options.host_lists) {
      auto hosts = parse_host_list(list, "--host");
      selection.hosts.insert(selection.hosts.end(), hosts.begin(), hosts.end());
    }
    selection.source = "--host";
  } else if (!options.hostfile.empty()) {
    selection.hosts = read_hostfile(options.hostfile);
    selection.source = fmt::format("--hostfile {}", options.hostfile);
  } else if (auto slurm = hosts_from_slurm(env)) {
    selection.hosts = std::move(*slurm);
    selection.source = "SLURM_JOB_NODELIST";
    selection.from_slurm = true;
  }
  return selection;
}

}  // namespace popdist::cli
