#pragma once
// Where each instance runs and which replicas it drives: PopRun's even division. With I
// instances, R replicas and H hosts, instance i runs on host i / (I/H) with local index
// i % (I/H), drives R/I replicas starting at i * R/I. Pure: a function of counts and hosts.
// Both processes use it: the launcher plans the job, each agent re-derives its instance from the
// counts (job/instance_plan.hpp).

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace popdist::cli {

/// One host the user named (the plan's input: run/plan/host_list.hpp parses them) and, when they
/// said so, how many slots (cores) it offers.
struct HostSpec {
  std::string name;
  std::optional<int> slots;

  friend bool operator==(const HostSpec& a, const HostSpec& b) { return a.name == b.name && a.slots == b.slots; }
};

/// One host of the plan.
struct PlannedHost {
  std::string name;
  std::optional<int> slots;  ///< what the user (or Slurm) said the host offers; nullopt: unknown
  int num_instances = 0;     ///< instances placed on it
};

/// One instance of the plan.
struct PlannedInstance {
  int index = 0;
  int host = 0;            ///< index into LaunchPlan::hosts
  int local_index = 0;     ///< among the instances of its host
  int replica_offset = 0;  ///< global index of its first replica
};

/// The whole job.
struct LaunchPlan {
  int num_instances = 1;
  int num_total_replicas = 1;
  int replicas_per_instance = 1;
  int ipus_per_replica = 1;
  bool explicit_hosts = false;  ///< false: this machine only (no --host for mpirun)
  std::vector<PlannedHost> hosts;
  std::vector<PlannedInstance> instances;
};

/// Plans `num_instances` instances and `num_replicas` replicas on `hosts` (empty: this machine,
/// shown as "localhost"). Preconditions (checked by validate_options/validate_hosts): counts
/// >= 1 and divisible.
[[nodiscard]] LaunchPlan plan_launch(int num_instances, int num_replicas, int ipus_per_replica,
                                     const std::vector<HostSpec>& hosts);

/// The POPDIST_* variables (design.md §3.1) of instance `index`, in a fixed order.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> popdist_variables(const LaunchPlan& plan, int index);

/// torchrun's variables of instance `index` (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
/// GROUP_RANK = host index, GROUP_WORLD_SIZE = hosts, MASTER_ADDR, MASTER_PORT), so that scripts
/// written for torchrun's env:// run unchanged. The job-wide TORCHELASTIC_* ones are the
/// attempt's (run/run_main.cpp: torch_job_variables).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> torchrun_variables(const LaunchPlan& plan, int index,
                                                                                  const std::string& master_addr,
                                                                                  int master_port);

}  // namespace popdist::cli
