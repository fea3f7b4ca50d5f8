#pragma once
// Where the hosts of a run come from, in order: --host, --hostfile, the Slurm allocation we run
// inside (SLURM_JOB_NODELIST), or none (this machine only).

#include <optional>
#include <string>
#include <vector>

#include "popdist/environment.hpp"
#include "run/options/run_options.hpp"
#include "run/plan/host_list.hpp"

namespace popdist::cli {

/// The hosts and a description of their source for messages ("--host", "--hostfile FILE",
/// "SLURM_JOB_NODELIST"); empty hosts mean "this machine only, no --host for mpirun".
struct HostSelection {
  std::vector<HostSpec> hosts;
  std::string source = "this machine";
  bool from_slurm = false;
};

/// The nodes of the Slurm allocation described by `env` (SLURM_JOB_NODELIST, slots from
/// SLURM_TASKS_PER_NODE, e.g. `3,1` or `2(x2)`, which is also what Open MPI uses as slots
/// there), or std::nullopt outside an allocation. Throws UsageError for malformed values, naming
/// the variable. Pure.
[[nodiscard]] std::optional<std::vector<HostSpec>> hosts_from_slurm(const EnvLookup& env);

/// Resolves the hosts for `options` (reads the hostfile when one is given).
[[nodiscard]] HostSelection select_hosts(const RunOptions& options, const EnvLookup& env);

}  // namespace popdist::cli
