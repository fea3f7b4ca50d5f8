// Slurm's srun (a step): SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, this node's count in
// SLURM_STEP_TASKS_PER_NODE, SLURM_NODEID. Only a step is a launch: salloc's shell and sbatch's
// batch script have no SLURM_STEP_ID, and the job-level variables describe the allocation.

#include <fmt/format.h>

#include "core/launchers/reading.hpp"
#include "popdist/slurm_tasks.hpp"

namespace popdist::detail {
namespace {

std::optional<std::string> present(const EnvLookup& env) { return first_set(env, {"SLURM_STEP_ID"}); }

Identity read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Slurm;
  identity.detected_by = present(env).value_or(kForced);
  // The step's size, never the job-level SLURM_NTASKS (srun --preserve-env leaves it stale).
  read_rank_and_size(identity, env, "SLURM_PROCID", "SLURM_STEP_NUM_TASKS");
  identity.node = read_field(env, "SLURM_NODEID", Expect::NonNegative);
  const auto local_rank = read_field(env, "SLURM_LOCALID", Expect::NonNegative);
  const auto tasks_text = env("SLURM_STEP_TASKS_PER_NODE");
  if (local_rank && !tasks_text) {
    fail(identity.launcher, fmt::format("{} is set but SLURM_STEP_TASKS_PER_NODE is not; expected both or neither",
                                        show(*local_rank)));
  }
  if (tasks_text) {
    const SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", *tasks_text);
    if (tasks.num_tasks() != identity.size.value) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' adds up to {} tasks but {}; expected the "
                                          "same number of tasks",
                                          *tasks_text, tasks.num_tasks(), show(identity.size)));
    }
    if (const auto nodes = read_field(env, "SLURM_STEP_NUM_NODES", Expect::Positive);
        nodes && nodes->value != tasks.num_nodes()) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' describes {} node(s) but {}; expected the "
                                          "same number of nodes",
                                          *tasks_text, tasks.num_nodes(), show(*nodes)));
    }
    if (!local_rank) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' is set but SLURM_LOCALID is not; expected "
                                          "both or neither",
                                          *tasks_text));
    }
    if (!identity.node) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' is set but SLURM_NODEID is not; expected "
                                          "the node index to find this node's task count",
                                          *tasks_text));
    }
    if (identity.node->value >= tasks.num_nodes()) {
      fail(identity.launcher, fmt::format("{} is not less than the {} node(s) of SLURM_STEP_TASKS_PER_NODE='{}'; "
                                          "expected a node index in 0..{}",
                                          show(*identity.node), tasks.num_nodes(), *tasks_text,
                                          tasks.num_nodes() - 1));
    }
    identity.local_rank = local_rank;
    identity.local_size = Field{tasks.tasks_on_node(identity.node->value), "SLURM_STEP_TASKS_PER_NODE"};
  }
  return validated(std::move(identity));
}

/// A job without a step: this process sits in the allocation (salloc's shell, sbatch's script)
/// and was not launched; SLURM_PROCID=0 there is the allocation's, not a task's.
std::optional<std::string> allocation_without_launch(const EnvLookup& env) {
  const auto job = env("SLURM_JOB_ID");
  if (!job || env("SLURM_STEP_ID")) return std::nullopt;
  return fmt::format("SLURM_JOB_ID={} is set but SLURM_STEP_ID is not: this is a salloc shell or an sbatch script, "
                     "not a process started by srun",
                     printable(*job));
}

}  // namespace

LauncherFamily slurm_family() {
  LauncherFamily family;
  family.markers = {"SLURM_STEP_ID"};
  family.present = present;
  family.read = read;
  family.stated = {{"SLURM_PROCID", true}, {"SLURM_STEP_NUM_TASKS"}, {"SLURM_LOCALID", true}, {"SLURM_NODEID", true}};
  family.needs = "slurm needs SLURM_STEP_ID: salloc and sbatch allocate but do not launch; run under srun";
  family.forced_hint = " (salloc and sbatch allocate but do not launch: run under srun)";
  family.allocation_without_launch = allocation_without_launch;
  return family;
}

}  // namespace popdist::detail
