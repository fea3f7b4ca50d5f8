#include "runtime/instance_record.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "popdist/topology_fields.hpp"

namespace popdist::detail {
namespace {

/// Where each field of the topology table travels in the record: a value slot (integers; the
/// launcher as its enumerator; an unknown host index as -1), or a bit of `flags`.
struct Slot {
  std::string_view field;
  std::int32_t InstanceRecord::*value = nullptr;
  InstanceRecord::Flag bit = {};
};

constexpr Slot kSlots[] = {
    {field::launcher, &InstanceRecord::launcher},
    {field::instance_index, &InstanceRecord::instance_index},
    {field::num_instances, &InstanceRecord::num_instances},
    {field::local_instance_index, &InstanceRecord::launcher_local_index},
    {field::num_local_instances, &InstanceRecord::launcher_local_count},
    {field::host_index, &InstanceRecord::launcher_host_index},
    {field::num_local_replicas, &InstanceRecord::num_local_replicas},
    {field::num_total_replicas, &InstanceRecord::num_total_replicas},
    {field::replica_index_offset, &InstanceRecord::replica_index_offset},
    {field::ipus_per_replica, &InstanceRecord::ipus_per_replica},
    {field::uniform_replicas_per_instance, nullptr, InstanceRecord::Uniform},
    {field::popdist_env_set, nullptr, InstanceRecord::PopdistEnvSet},
};

constexpr const Slot* slot_of(std::string_view name) {
  for (const auto& slot : kSlots) {
    if (slot.field == name) return &slot;
  }
  return nullptr;
}

constexpr bool every_field_has_a_slot() {
  for (const auto& field : topology_fields) {
    if (slot_of(field.name) == nullptr) return false;
  }
  return true;
}
static_assert(every_field_has_a_slot(), "every field of topology_fields travels in the instance record");

}  // namespace

InstanceRecord make_record(const Topology& topology) {
  InstanceRecord record;
  record.flags = 0;
  for (const auto& field : topology_fields) {
    const Slot& slot = *slot_of(field.name);
    switch (field.kind) {
      case FieldKind::LauncherName:
        record.*slot.value = static_cast<std::int32_t>(topology.launcher);
        break;
      case FieldKind::Integer:
      case FieldKind::OptionalInteger:
        // Counts and indices fit: detect() reads them as int.
        record.*slot.value = static_cast<std::int32_t>(field_integer(topology, field).value_or(-1));
        break;
      case FieldKind::Flag:
        if (topology.*field.flag) record.flags |= slot.bit;
        break;
    }
  }
  const auto said = said_by_launcher(topology);
  record.flags |= (said.local_index ? InstanceRecord::SaidLocal : 0) |
                  (said.local_count ? InstanceRecord::SaidLocalCount : 0) |
                  (said.host ? InstanceRecord::SaidHost : 0) |
                  (topology.ipus_per_replica_set ? InstanceRecord::IpusPerReplicaSet : 0);
  return record;
}

InstanceRecord make_failed_record() {
  InstanceRecord record;
  record.failed = 1;
  return record;
}

std::vector<int> failed_ranks(const std::vector<InstanceRecord>& records) {
  std::vector<int> failed;
  for (std::size_t rank = 0; rank < records.size(); ++rank) {
    if (records[rank].failed != 0) failed.push_back(static_cast<int>(rank));
  }
  return failed;
}

std::vector<HostPlacement> host_placements(const std::vector<InstanceRecord>& records) {
  // The shared-memory leader is the lowest MPI rank on the host; ranks are instance indices, so
  // ordering hosts by leader orders them by their lowest instance index.
  std::vector<int> leaders;
  for (const auto& record : records) leaders.push_back(record.shm_leader);
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  std::vector<HostPlacement> placements;
  placements.reserve(records.size());
  for (const auto& record : records) {
    HostPlacement placement;
    placement.host_index =
        static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), record.shm_leader) - leaders.begin());
    placement.local_instance_index = record.shm_local_index;
    placement.num_local_instances = record.shm_local_count;
    placements.push_back(placement);
  }
  return placements;
}

bool supplied_by_variable(const Topology& topology, std::string_view field) {
  const auto source = provenance_of(topology, field);
  return !source.empty() && source != "unknown" && source != "default" && source != "derived" && source != "mpi";
}

SaidByLauncher said_by_launcher(const Topology& topology) {
  SaidByLauncher said;
  said.local_index = supplied_by_variable(topology, field::local_instance_index);
  said.local_count = supplied_by_variable(topology, field::num_local_instances);
  said.host = topology.host_index.has_value() && supplied_by_variable(topology, field::host_index);
  return said;
}

std::vector<std::string> apply_placement(Topology& topology, SaidByLauncher said, const HostPlacement& placement) {
  std::vector<std::string> warnings;
  const auto source = [&](std::string_view field) { return provenance_of(topology, field); };
  if (!said.local_index) {
    topology.local_instance_index = placement.local_instance_index;
    source_of(topology, field::local_instance_index) = "mpi";
  } else if (topology.local_instance_index != placement.local_instance_index) {
    warnings.push_back(fmt::format("the launcher says local instance index {} ({}), but MPI's shared-memory split "
                                   "says {}; keeping the launcher's value",
                                   topology.local_instance_index, source(field::local_instance_index),
                                   placement.local_instance_index));
  }
  if (!said.local_count) {
    topology.num_local_instances = placement.num_local_instances;
    source_of(topology, field::num_local_instances) = "mpi";
  } else if (topology.num_local_instances != placement.num_local_instances) {
    warnings.push_back(fmt::format("the launcher says {} local instances ({}), but MPI's shared-memory split says {}; "
                                   "keeping the launcher's value",
                                   topology.num_local_instances, source(field::num_local_instances),
                                   placement.num_local_instances));
  }
  if (!said.host) {
    topology.host_index = placement.host_index;
    source_of(topology, field::host_index) = "mpi";
  } else if (topology.host_index != placement.host_index) {
    warnings.push_back(fmt::format("the launcher says host {} ({}), but MPI's shared-memory split makes it host {}; "
                                   "keeping the launcher's value",
                                   topology.host_index.value_or(-1), source(field::host_index), placement.host_index));
  }
  return warnings;
}

Topology topology_of(const InstanceRecord& record, const HostPlacement& placement) {
  Topology topology;
  for (const auto& field : topology_fields) {
    const Slot& slot = *slot_of(field.name);
    switch (field.kind) {
      case FieldKind::LauncherName:
        topology.launcher = static_cast<Launcher>(record.*slot.value);
        break;
      case FieldKind::Integer:
        topology.*field.integer = record.*slot.value;
        break;
      case FieldKind::OptionalInteger:
        topology.*field.optional_integer =
            record.*slot.value >= 0 ? std::optional<int>(record.*slot.value) : std::nullopt;
        break;
      case FieldKind::Flag:
        topology.*field.flag = record.has(slot.bit);
        break;
    }
  }
  topology.ipus_per_replica_set = record.has(InstanceRecord::IpusPerReplicaSet);
  SaidByLauncher said;
  said.local_index = record.has(InstanceRecord::SaidLocal);
  said.local_count = record.has(InstanceRecord::SaidLocalCount);
  said.host = record.has(InstanceRecord::SaidHost);
  topology.warnings = apply_placement(topology, said, placement);
  return topology;
}

}  // namespace popdist::detail
