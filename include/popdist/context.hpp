#pragma once
/// @file context.hpp
/// PopDist's C++ getters by PopDist's names (`<popdist/context.hpp>`), so that code written for
/// Graphcore's PopDist compiles unchanged. Each reads popdist::topology() (runtime.hpp): detected
/// from the launcher's environment on first use, no MPI needed. Counts are unsigned, as in PopDist.
#include <cstdint>

#include "popdist/runtime.hpp"
#include "popdist/topology.hpp"

namespace popdist {

/// True when PopRun's variables are set or a launcher started this process (README: a
/// deliberate difference from PopDist, so that a PopDist program under plain mpirun is one job).
[[nodiscard]] inline bool isPopdistEnvSet() { return is_popdist_env_set(); }
[[nodiscard]] inline unsigned getInstanceIndex() { return static_cast<unsigned>(instance_index()); }
[[nodiscard]] inline unsigned getNumInstances() { return static_cast<unsigned>(num_instances()); }
[[nodiscard]] inline unsigned getLocalInstanceIndex() { return static_cast<unsigned>(local_instance_index()); }
[[nodiscard]] inline unsigned getNumLocalReplicas() { return static_cast<unsigned>(num_local_replicas()); }
[[nodiscard]] inline unsigned getNumTotalReplicas() { return static_cast<unsigned>(num_total_replicas()); }
[[nodiscard]] inline unsigned getReplicaIndexOffset() { return static_cast<unsigned>(replica_index_offset()); }
[[nodiscard]] inline unsigned getNumIpusPerReplica() { return static_cast<unsigned>(ipus_per_replica()); }
[[nodiscard]] inline bool isUniformReplicasPerInstance() { return is_uniform_replicas_per_instance(); }
/// False if POPDIST_NUM_IPUS_PER_REPLICA is set and differs from `ipus`; unset: `ipus` == 1.
[[nodiscard]] inline bool checkNumIpusPerReplica(unsigned ipus) {
  return check_ipus_per_replica(topology(), static_cast<int>(ipus));
}
/// The id of this instance's multi-IPU device group (DESIGN.md 4); 0 takes the IPUs per replica
/// from the environment.
[[nodiscard]] inline std::int64_t getDeviceId(unsigned ipusPerReplica = 0) {
  return device_id(topology(), static_cast<int>(ipusPerReplica));
}

}  // namespace popdist
