#pragma once
// The fixed-size record every instance contributes to init()'s single MPI_Allgather, and the
// pure checks run on the gathered records (DESIGN.md 3.3). Every instance runs the same checks
// on the same data, so all of them reach the same verdict and nobody is left waiting.

#include <cstdint>
#include <string>
#include <vector>

#include "popdist/topology.hpp"

namespace popdist::detail {

/// Plain old data, sent as MPI_BYTE: the job is homogeneous (one binary, one ABI), so the layout
/// is the same on every instance.
struct InstanceRecord {
  std::int32_t failed = 0;  ///< 1: this instance could not take part (error_type/error say why)
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
  std::int32_t launcher_said_local = 0;   ///< the local instance index came from a variable
  std::int32_t launcher_said_local_count = 0;  ///< the local instance count came from a variable
  std::int32_t launcher_said_host = 0;    ///< the host index came from a launcher variable
  std::int32_t uniform = 1;
  std::int32_t popdist_env_set = 0;
  std::int32_t ipus_per_replica_set = 0;
  std::int32_t mpi_rank = 0;
  std::int32_t shm_leader = 0;       ///< MPI rank of the lowest rank sharing this host's memory
  std::int32_t shm_local_index = 0;  ///< rank in the shared-memory communicator
  std::int32_t shm_local_count = 1;  ///< size of the shared-memory communicator
  char hostname[256] = {};
  char error_type[64] = {};
  char error[640] = {};
};

/// The record of one instance's topology (failed = 0, MPI fields left for the caller).
[[nodiscard]] InstanceRecord make_record(const Topology& topology);

/// A record saying this instance failed before the gather (type and message are truncated to fit).
[[nodiscard]] InstanceRecord make_failed_record(const std::string& type, const std::string& message);

/// Copies `text` into a fixed buffer, truncating and always NUL-terminating.
void copy_text(char* destination, std::size_t capacity, const std::string& text);

/// The records' instances that failed, ascending by MPI rank.
[[nodiscard]] std::vector<int> failed_ranks(const std::vector<InstanceRecord>& records);

/// Checks the gathered records (indexed by MPI rank) against each other: instance indices form
/// a permutation of 0..n-1 and equal the MPI rank, every instance counts n instances, the same
/// total replicas and devices per replica everywhere, and the replica ranges tile 0..total-1.
/// Throws TopologyError naming the instances and values that disagree.
void check_records(const std::vector<InstanceRecord>& records);

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
[[nodiscard]] bool supplied_by_variable(const Topology& topology, const std::string& field);

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
