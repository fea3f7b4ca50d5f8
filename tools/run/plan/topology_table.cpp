#include "run/plan/topology_table.hpp"

#include <cstdint>
#include <vector>

#include "common/box_diagram.hpp"

namespace popdist::cli {
namespace {

// One column of the box: a run of consecutive instances (all on one host) and its replicas.
struct Column {
  int host = 0;
  int first_instance = 0;
  int num_instances = 1;
};

// The finest grouping that fits kMaxBoxColumns: a column per replica, per instance, per host,
// or one for the whole job. Computed from the counts: nothing here grows with the replicas.
enum class Grain { Replica, Instance, Host, Job };

Grain grain_for(const LaunchPlan& plan) {
  if (plan.num_total_replicas <= kMaxBoxColumns) return Grain::Replica;
  if (plan.num_instances <= kMaxBoxColumns) return Grain::Instance;
  if (static_cast<int>(plan.hosts.size()) <= kMaxBoxColumns) return Grain::Host;
  return Grain::Job;
}

}  // namespace

std::string topology_table(const LaunchPlan& plan) {
  const Grain grain = grain_for(plan);
  const std::int64_t per_instance = plan.replicas_per_instance;
  const std::int64_t devices = plan.ipus_per_replica;
  DiagramRow hosts{"hosts", {}};
  DiagramRow instances{"instances", {}};
  DiagramRow replicas{"replicas", {}};
  DiagramRow device_row{"devices", {}};
  if (grain == Grain::Job) {
    hosts.cells.push_back({std::to_string(plan.hosts.size()) + " hosts", 1});
    instances.cells.push_back({index_range(0, plan.num_instances), 1});
    replicas.cells.push_back({index_range(0, plan.num_total_replicas), 1});
    device_row.cells.push_back({index_range(0, plan.num_total_replicas * devices), 1});
  } else {
    int first = 0;  // instances sit on the hosts in order (job/launch_plan.hpp)
    for (const PlannedHost& host : plan.hosts) {
      const int count = host.num_instances;
      if (grain == Grain::Host) {
        hosts.cells.push_back({host.name, 1});
        instances.cells.push_back({index_range(first, count), 1});
        replicas.cells.push_back({index_range(first * per_instance, count * per_instance), 1});
        device_row.cells.push_back({index_range(first * per_instance * devices, count * per_instance * devices), 1});
      } else {
        const int span = grain == Grain::Replica ? static_cast<int>(per_instance) : 1;
        hosts.cells.push_back({host.name, count * span});
        for (int i = first; i < first + count; ++i) {
          instances.cells.push_back({std::to_string(i), span});
          if (grain == Grain::Replica) {
            for (std::int64_t r = i * per_instance; r < (i + 1) * per_instance; ++r) {
              replicas.cells.push_back({std::to_string(r), 1});
              device_row.cells.push_back({index_range(r * devices, devices), 1});
            }
          } else {
            replicas.cells.push_back({index_range(i * per_instance, per_instance), 1});
            device_row.cells.push_back({index_range(i * per_instance * devices, per_instance * devices), 1});
          }
        }
      }
      first += count;
    }
  }
  return render_box_diagram("popdist topology", {hosts, instances, replicas, device_row});
}

}  // namespace popdist::cli
