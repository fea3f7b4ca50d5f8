#pragma once
// The largest job `popdist run` plans. Every count is checked against these before anything is
// allocated for it, and the bounds keep every product (replicas x devices, instances x replicas)
// inside an int, so no arithmetic on them can overflow.

namespace popdist::cli {

/// The mpirun command has one app context whatever the count (each agent derives its instance
/// from its rank), so the bound is what Open MPI and the hosts' process limits make sensible; the
/// command is still measured before mpirun starts (run/launch/command_length.hpp).
inline constexpr int kMaxInstances = 1 << 16;
/// Hosts beyond the number of instances could not all be used (instances divide evenly).
inline constexpr int kMaxHosts = 4096;
/// 2^20 replicas; with kMaxIpusPerReplica devices each, 2^30 devices still fit an int.
inline constexpr int kMaxReplicas = 1 << 20;
inline constexpr int kMaxIpusPerReplica = 1 << 10;
inline constexpr int kMaxRestarts = 1000;
inline constexpr int kMaxGracePeriod = 3600;

}  // namespace popdist::cli
