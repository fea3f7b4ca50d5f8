#pragma once
// The compact record an instance contributes when init() must look at every instance (its
// reductions found something amiss, or the replicas are not uniform), and what
// instance_views() and survey_job() gather on request; how another instance's view is rebuilt
// from it. The cross-instance rules themselves are the job check's (popdist/job_check.hpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"

namespace popdist::detail {

/// Where a field of the table travels in the record: Flag fields as a bit of `flags`, every other
/// kind as one int32 slot of `values` (integers; the launcher as its enumerator; an unknown host
/// index as -1). Both are positions among the table's rows of that kind, so a new field takes its
/// place by its row alone.
[[nodiscard]] constexpr bool travels_as_flag(const TopologyField& field) { return field.kind == FieldKind::Flag; }

[[nodiscard]] constexpr std::size_t count_value_fields() {
  std::size_t count = 0;
  for (const auto& field : topology_fields) count += travels_as_flag(field) ? 0 : 1;
  return count;
}

/// The bits of `flags` that are not fields of the table: init()'s own facts about the topology.
enum RecordFlag : std::int32_t {
  SaidLocal = 1,          ///< the local instance index came from a launcher variable
  SaidLocalCount = 2,     ///< the local instance count came from a launcher variable
  SaidHost = 4,           ///< the host index came from a launcher variable
  IpusPerReplicaSet = 8,  ///< POPDIST_NUM_IPUS_PER_REPLICA was set
  FirstFieldFlag = 16,    ///< the table's Flag fields follow, one bit each in row order
};

/// The bit of the Flag field `name` (0 for a name that is not a Flag field of the table).
[[nodiscard]] constexpr std::int32_t field_flag_bit(std::string_view name) {
  std::int32_t bit = FirstFieldFlag;
  for (const auto& field : topology_fields) {
    if (!travels_as_flag(field)) continue;
    if (field.name == name) return bit;
    bit <<= 1;
  }
  return 0;
}

/// The slot of the non-Flag field `name` in `values` (count_value_fields() for any other name).
[[nodiscard]] constexpr std::size_t field_value_slot(std::string_view name) {
  std::size_t slot = 0;
  for (const auto& field : topology_fields) {
    if (travels_as_flag(field)) continue;
    if (field.name == name) return slot;
    ++slot;
  }
  return slot;
}

/// Plain old data, sent as MPI_BYTE: the job is homogeneous (one binary, one ABI), so the layout
/// is the same on every instance. Its size is what the field table needs: int32s only, so no
/// padding (64 bytes with today's 12 fields; tests/bench/README.md, "Scaling", counts it per
/// instance). No hostname and no error text here -- hostnames travel only when views are asked
/// for, error texts only from an instance that failed.
struct InstanceRecord {
  /// The bit init()'s screen reads (replicas per instance uniform), from the table.
  static constexpr std::int32_t kUniform = field_flag_bit(field::uniform_replicas_per_instance);

  /// The default topology's record (Topology{}), as a record made by hand starts.
  InstanceRecord();

  std::int32_t failed = 0;  ///< 1: this instance could not take part (its error travels separately)
  std::int32_t flags = 0;   ///< RecordFlag bits, then one bit per Flag field of the table
  std::int32_t mpi_rank = 0;
  std::int32_t shm_leader = 0;       ///< MPI rank of the lowest rank sharing this host's memory
  std::int32_t shm_local_index = 0;  ///< rank in the shared-memory communicator
  std::int32_t shm_local_count = 1;  ///< size of the shared-memory communicator
  std::array<std::int32_t, count_value_fields()> values{};  ///< the table's other fields, in row order

  [[nodiscard]] bool has(std::int32_t bit) const noexcept { return (flags & bit) != 0; }
  /// The slot of a non-Flag field of the table, by its name (field::instance_index, ...).
  [[nodiscard]] std::int32_t& value(std::string_view field) { return values.at(field_value_slot(field)); }
  [[nodiscard]] std::int32_t value(std::string_view field) const { return values.at(field_value_slot(field)); }
};
static_assert(std::is_trivially_copyable_v<InstanceRecord>, "the record travels as MPI_BYTE");
static_assert(std::is_standard_layout_v<InstanceRecord> &&
                  sizeof(InstanceRecord) == offsetof(InstanceRecord, values) + sizeof(InstanceRecord::values),
              "the record is int32s only, so no padding travels");
static_assert(topology_fields.size() - count_value_fields() <= 27, "the Flag fields' bits fit in int32 flags");
static_assert(InstanceRecord::kUniform != 0, "uniform_replicas_per_instance is a Flag field of the table");

/// The record of one instance's topology (failed = 0, MPI fields left for the caller).
[[nodiscard]] InstanceRecord make_record(const Topology& topology);

/// A record saying this instance failed before the exchange.
[[nodiscard]] InstanceRecord make_failed_record();

/// The records' instances that failed, ascending by MPI rank.
[[nodiscard]] std::vector<int> failed_ranks(const std::vector<InstanceRecord>& records);

/// Where each instance lives according to MPI's shared-memory split: host index = rank of the
/// host among all hosts ordered by their lowest instance index.
struct HostPlacement {
  int host_index = 0;
  int local_instance_index = 0;
  int num_local_instances = 1;
};
[[nodiscard]] std::vector<HostPlacement> host_placements(const std::vector<InstanceRecord>& records);

/// True when `field` (a provenance key such as "local_instance_index") was supplied by a
/// variable, not "default", "derived" or "mpi".
[[nodiscard]] bool supplied_by_variable(const Topology& topology, std::string_view field);

/// Fills in host index, local instance index and count from MPI's placement where the launcher
/// did not say (provenance "mpi"); where it did and MPI disagrees, keeps the launcher's value and
/// returns a warning naming both. The rule for every instance's view alike.
struct SaidByLauncher {
  bool local_index = false;
  bool local_count = false;
  bool host = false;
};
[[nodiscard]] SaidByLauncher said_by_launcher(const Topology& topology);
std::vector<std::string> apply_placement(Topology& topology, SaidByLauncher said, const HostPlacement& placement);

/// Another instance's view rebuilt from its record (no provenance beyond the "mpi" fields).
[[nodiscard]] Topology topology_of(const InstanceRecord& record, const HostPlacement& placement);

}  // namespace popdist::detail
