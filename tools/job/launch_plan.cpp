#include "job/launch_plan.hpp"

namespace popdist::cli {

LaunchPlan plan_launch(int num_instances, int num_replicas, int ipus_per_replica, const std::vector<HostSpec>& hosts) {
  LaunchPlan plan;
  plan.num_instances = num_instances;
  plan.num_total_replicas = num_replicas;
  plan.replicas_per_instance = num_replicas / num_instances;
  plan.ipus_per_replica = ipus_per_replica;
  plan.explicit_hosts = !hosts.empty();
  if (hosts.empty()) {
    plan.hosts.push_back({"localhost", std::nullopt, 0});
  } else {
    for (const auto& host : hosts) plan.hosts.push_back({host.name, host.slots, 0});
  }
  const int per_host = num_instances / static_cast<int>(plan.hosts.size());
  for (int i = 0; i < num_instances; ++i) {
    PlannedInstance instance;
    instance.index = i;
    instance.host = i / per_host;
    instance.local_index = i % per_host;
    instance.replica_offset = i * plan.replicas_per_instance;
    plan.hosts[instance.host].num_instances += 1;
    plan.instances.push_back(instance);
  }
  return plan;
}

std::vector<std::pair<std::string, std::string>> popdist_variables(const LaunchPlan& plan, int index) {
  const PlannedInstance& instance = plan.instances.at(static_cast<std::size_t>(index));
  return {
      {"POPDIST_NUM_TOTAL_REPLICAS", std::to_string(plan.num_total_replicas)},
      {"POPDIST_NUM_LOCAL_REPLICAS", std::to_string(plan.replicas_per_instance)},
      {"POPDIST_REPLICA_INDEX_OFFSET", std::to_string(instance.replica_offset)},
      {"POPDIST_NUM_IPUS_PER_REPLICA", std::to_string(plan.ipus_per_replica)},
      // PopRun divides replicas evenly, so every instance has the same number.
      {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"},
      {"POPDIST_LOCAL_INSTANCE_INDEX", std::to_string(instance.local_index)},
  };
}

std::vector<std::pair<std::string, std::string>> torchrun_variables(const LaunchPlan& plan, int index,
                                                                   const std::string& master_addr, int master_port) {
  const PlannedInstance& instance = plan.instances.at(static_cast<std::size_t>(index));
  return {
      {"RANK", std::to_string(instance.index)},
      {"WORLD_SIZE", std::to_string(plan.num_instances)},
      {"LOCAL_RANK", std::to_string(instance.local_index)},
      {"LOCAL_WORLD_SIZE", std::to_string(plan.hosts.at(static_cast<std::size_t>(instance.host)).num_instances)},
      {"GROUP_RANK", std::to_string(instance.host)},
      {"GROUP_WORLD_SIZE", std::to_string(plan.hosts.size())},
      {"MASTER_ADDR", master_addr},
      {"MASTER_PORT", std::to_string(master_port)},
  };
}

}  // namespace popdist::cli
