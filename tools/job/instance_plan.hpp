#pragma once
// The plan as each instance sees it. `popdist run` starts every instance with one app context
// (`mpirun -np N ... popdist _instance --plan I,R,D,H -- program`), so that the command does not
// grow with the number of instances; each instance's agent derives its own variables from the
// rank that mpirun gives it and these four counts (PopRun's even division, launch_plan.hpp).

#include <string>
#include <utility>
#include <vector>

#include "job/launch_plan.hpp"

namespace popdist::cli {

/// "instances,replicas,devices per replica,hosts" for the agent's --plan.
[[nodiscard]] std::string plan_argument(const LaunchPlan& plan);

/// The plan that plan_argument() describes (host names are not needed on the instance side).
/// Throws UsageError naming --plan and the value when it is not four counts that divide evenly.
[[nodiscard]] LaunchPlan plan_from_argument(const std::string& text);

/// Instance `index`'s own variables: POPDIST_* (design.md §3.1) and torchrun's identity (RANK,
/// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE). MASTER_ADDR and
/// MASTER_PORT are the same everywhere and travel on mpirun's command line.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> instance_variables(const LaunchPlan& plan, int index);

/// The default OMP_NUM_THREADS of an instance: the cores of its host divided among the
/// instances on that host, at least 1 (docs/guide/long-jobs.md says why not torchrun's 1).
[[nodiscard]] int default_omp_threads(int host_cores, int local_instances);

}  // namespace popdist::cli
