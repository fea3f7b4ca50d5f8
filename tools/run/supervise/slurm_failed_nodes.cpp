#include "run/supervise/slurm_failed_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>

#include "common/say.hpp"
#include "run/report/slurm_nodes.hpp"
#include "run/supervise/slurm_step.hpp"

namespace popdist::cli {

bool ended_from_outside(const AttemptEnd& end, const std::vector<Failure>& failures, bool stopped) {
  if (end.status == 0 || stopped) return false;
  if (!end.lost.empty() || !end.unreported.empty()) return true;
  return std::any_of(failures.begin(), failures.end(), [](const Failure& failure) {
    return failure.end.status == 128 + SIGTERM || failure.end.status == 128 + SIGKILL;
  });
}

std::string explain_by_slurm(const std::string& launcher, const LaunchPlan& plan, AttemptEnd& end, bool verbose) {
  std::vector<std::string> names;
  for (const auto& host : plan.hosts) names.push_back(host.name);
  std::string problem;
  const auto nodes = parse_slurm_nodes(node_states(launcher, names, std::chrono::seconds(3), problem));
  if (verbose) {
    std::string states;
    for (const auto& node : nodes) {
      states += fmt::format("{}{} {}{}", states.empty() ? "" : ", ", node.name, node.state,
                            node.reason.empty() ? "" : " (" + node.reason + ")");
    }
    say(problem.empty() ? "Slurm's state of the job's nodes after the failure (sinfo): " + states
                        : "could not ask Slurm about the job's nodes: " + problem);
  }
  std::vector<SlurmNode> out;
  std::copy_if(nodes.begin(), nodes.end(), std::back_inserter(out), out_of_service);
  const auto failed_node = [&out](const LostHost& lost) {
    return std::any_of(out.begin(), out.end(), [&lost](const SlurmNode& node) { return node.name == lost.host; });
  };
  // A lost host Slurm kept in service lost its instances to the step's end on the failed node.
  if (std::any_of(end.lost.begin(), end.lost.end(), failed_node)) {
    const auto kept_in_service = [&](const LostHost& lost) { return !failed_node(lost); };
    end.lost.erase(std::remove_if(end.lost.begin(), end.lost.end(), kept_in_service), end.lost.end());
  }
  return slurm_nodes_report(out);
}

}  // namespace popdist::cli
