#include "runtime/instance_record.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>

#include "popdist/topology_fields.hpp"

namespace popdist::detail {
namespace {

// The record's bits for what init() knows beyond the table's fields.
std::int32_t said_flags(const Topology& topology) {
  const auto said = said_by_launcher(topology);
  return (said.local_index ? SaidLocal : 0) | (said.local_count ? SaidLocalCount : 0) | (said.host ? SaidHost : 0) |
         (topology.ipus_per_replica_set ? IpusPerReplicaSet : 0);
}

// Every field of the table into its slot or bit; the other members are left as they are.
void write_fields(InstanceRecord& record, const Topology& topology) {
  record.flags = said_flags(topology);
  for (const auto& field : topology_fields) {
    switch (field.kind) {
      case FieldKind::LauncherName:
        record.value(field.name) = static_cast<std::int32_t>(topology.launcher);
        break;
      case FieldKind::Integer:
      case FieldKind::OptionalInteger:
        // Counts and indices fit: detect() reads them as int.
        record.value(field.name) = static_cast<std::int32_t>(field_integer(topology, field).value_or(-1));
        break;
      case FieldKind::Flag:
        if (topology.*field.flag) record.flags |= field_flag_bit(field.name);
        break;
    }
  }
}

// Every field of the table from its slot or bit.
void read_fields(const InstanceRecord& record, Topology& topology) {
  for (const auto& field : topology_fields) {
    switch (field.kind) {
      case FieldKind::LauncherName:
        topology.launcher = static_cast<Launcher>(record.value(field.name));
        break;
      case FieldKind::Integer:
        topology.*field.integer = record.value(field.name);
        break;
      case FieldKind::OptionalInteger: {
        const auto value = record.value(field.name);
        topology.*field.optional_integer = value >= 0 ? std::optional<int>(value) : std::nullopt;
        break;
      }
      case FieldKind::Flag:
        topology.*field.flag = record.has(field_flag_bit(field.name));
        break;
    }
  }
  topology.ipus_per_replica_set = record.has(IpusPerReplicaSet);
}

}  // namespace

InstanceRecord::InstanceRecord() { write_fields(*this, Topology{}); }

InstanceRecord make_record(const Topology& topology) {
  InstanceRecord record;
  write_fields(record, topology);
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
  read_fields(record, topology);
  SaidByLauncher said;
  said.local_index = record.has(SaidLocal);
  said.local_count = record.has(SaidLocalCount);
  said.host = record.has(SaidHost);
  topology.warnings = apply_placement(topology, said, placement);
  return topology;
}

}  // namespace popdist::detail
