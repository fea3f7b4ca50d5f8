#pragma once
// Slurm's word on the nodes of a failed srun job: when Slurm marks a node DOWN (or it fails, or
// drains) it ends the job's step -- under --no-kill the allocation lives on, the step does not --
// and the agents there are killed with their instances or report a SIGTERM from outside. The
// failure report then names the node and Slurm's reason, from `sinfo -h -N -n <nodes> -o
// '%N|%T|%E'` asked once after srun ended (slurm_step.hpp asks; this file only reads). Pure.

#include <string>
#include <vector>

namespace popdist::cli {

/// One node as sinfo states it: "n2", "down" (sinfo's long state, "*" = not responding), "test".
struct SlurmNode {
  std::string name;
  std::string state;
  std::string reason;  ///< empty when Slurm has none ("none")
};

/// sinfo's `%N|%T|%E` lines, one node each (a node of two partitions once); lines of another
/// shape are skipped.
[[nodiscard]] std::vector<SlurmNode> parse_slurm_nodes(const std::string& sinfo_output);

/// Whether Slurm took the node out of service, which ends the steps on it: DOWN, FAIL(ING),
/// DRAIN(ED|ING), or not responding ("*").
[[nodiscard]] bool out_of_service(const SlurmNode& node);

/// The report's lines for the nodes out of service, one each:
/// "  Slurm took node n2 out of service: DOWN, reason \"test\" (it ended the job's step there)".
/// Empty when none is.
[[nodiscard]] std::string slurm_nodes_report(const std::vector<SlurmNode>& nodes);

}  // namespace popdist::cli
