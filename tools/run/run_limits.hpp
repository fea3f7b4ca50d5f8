#pragma once
// The largest job `popdist run` plans. Every count is checked against these before anything is
// allocated for it, and the bounds keep every product (replicas x devices, instances x replicas)
// inside an int, so no arithmetic on them can overflow.

namespace popdist::cli {

/// Each instance is one app context on mpirun's command line (~300 bytes plus the program), and
/// Linux limits a command line to about 2 MB: 4096 contexts fit with a short program (the whole
/// command is measured before mpirun starts: command_length.hpp).
inline constexpr int max_instances = 1 << 16;
/// Hosts beyond the number of instances could not all be used (instances divide evenly).
inline constexpr int max_hosts = 4096;
/// 2^20 replicas; with max_ipus_per_replica devices each, 2^30 devices still fit an int.
inline constexpr int max_replicas = 1 << 20;
inline constexpr int max_ipus_per_replica = 1 << 10;
inline constexpr int max_restarts = 1000;
inline constexpr int max_grace_period = 3600;

}  // namespace popdist::cli
