#pragma once
// The compact record an instance contributes when init() must look at every instance (its
// reductions found something amiss, or the replicas are not uniform), and what
// instance_views() and survey_job() gather on request; how another instance's view is rebuilt
// from it. The cross-instance rules themselves are the job check's (popdist/job_check.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "popdist/topology.hpp"

namespace popdist::detail {

/// Plain old data, sent as MPI_BYTE: the job is homogeneous (one binary, one ABI), so the layout
/// is the same on every instance. Kept at 64 bytes (DESIGN.md 5, "Scale"): no hostname and no
/// error text here -- hostnames travel only when views are asked for, error texts only from an
/// instance that failed.
struct InstanceRecord {
  enum Flag : std::int32_t {
    SaidLocal = 1,         ///< the local instance index came from a launcher variable
    SaidLocalCount = 2,    ///< the local instance count came from a launcher variable
    SaidHost = 4,          ///< the host index came from a launcher variable
    Uniform = 8,
    PopdistEnvSet = 16,
    IpusPerReplicaSet = 32,
  };
  std::int32_t failed = 0;  ///< 1: this instance could not take part (its error travels separately)
  std::int32_t launcher = 0;
  std::int32_t instance_index = 0;
  std::int32_t num_instances = 1;
  std::int32_t replica_index_offset = 0;
  std::int32_t num_local_replicas = 1;
  std::int32_t num_total_replicas = 1;
  std::int32_t ipus_per_replica = 1;
  std::int32_t launcher_local_index = 0;
  std::int32_t launcher_local_count = 1;
  std::int32_t launcher_host_index = -1;  ///< -1: the launcher gives no node index
  std::int32_t flags = Uniform;
  std::int32_t mpi_rank = 0;
  std::int32_t shm_leader = 0;       ///< MPI rank of the lowest rank sharing this host's memory
  std::int32_t shm_local_index = 0;  ///< rank in the shared-memory communicator
  std::int32_t shm_local_count = 1;  ///< size of the shared-memory communicator
  [[nodiscard]] bool has(Flag flag) const noexcept { return (flags & flag) != 0; }
};
static_assert(sizeof(InstanceRecord) <= 64, "the record init() may gather must stay compact");

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
