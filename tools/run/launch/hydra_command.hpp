#pragma once
// The one hydra `mpiexec` command of a run (MPICH, Intel MPI): hydra's global options, then one
// executable for every instance (`-n N popdist _instance --plan I,R,D,H -- program`). The table of
// how each of popdist run's notions is said to hydra is docs/guide/launchers.md's; what differs
// per instance is derived by its agent from PMI_RANK. Pure, as mpirun_command.hpp.

#include "job/launch_plan.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

/// Builds hydra's command. Throws UsageError for what build_mpirun_command refuses, for Open MPI's
/// own options in --mpi-*-args (--mca, -x: hydra stops at them with "unrecognized argument"), and
/// for -genv/-env of a variable popdist run sets.
[[nodiscard]] MpirunCommand build_hydra_command(const LaunchPlan& plan, const RunOptions& options,
                                                const MpirunContext& context);

}  // namespace popdist::cli
