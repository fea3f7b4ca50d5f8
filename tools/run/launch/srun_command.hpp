#pragma once
// The one Slurm `srun` command of a run: one step of N tasks, the agent in front of each
// (`srun --ntasks N ... popdist _instance --plan I,R,D,H -- program`). Inside an allocation srun
// starts a step of it; outside one it asks for its own allocation first, as srun does. The table
// of how each of popdist run's notions is said to srun is docs/guide/launchers.md's; what differs
// per instance is derived by its agent from SLURM_PROCID. Pure, as mpirun_command.hpp.

#include "job/launch_plan.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

/// Builds srun's command. Throws UsageError for what build_mpirun_command refuses, for Open MPI's
/// and hydra's own options in --mpi-*-args (srun stops at them), and for srun options that would
/// undo what popdist run relies on (--export without ALL, --kill-on-bad-exit, --label, --job-name).
[[nodiscard]] MpirunCommand build_srun_command(const LaunchPlan& plan, const RunOptions& options,
                                               const MpirunContext& context);

/// The name srun gives the attempt's step (--job-name; outside an allocation also the job's): the
/// job directory's own name, `popdist-run-<6 random characters>`, unique on this machine while the
/// attempt runs, so that `squeue --steps --name` finds exactly this step (slurm_step.hpp).
[[nodiscard]] std::string srun_step_name(const MpirunContext& context);

}  // namespace popdist::cli
