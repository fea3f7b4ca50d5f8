#pragma once
/// @file topology.hpp
/// The topology of one instance, detected from the launcher's environment without MPI
/// (design.md §3 and §4).

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "popdist/environment.hpp"
#include "popdist/launcher_families.hpp"

namespace popdist {

/// The launcher family that supplied this process's identity (design.md §3.2): one enumerator per
/// row of the family table, launcher_families.hpp (e.g. Launcher::OpenMpi, Launcher::Slurm).
enum class Launcher {
#define POPDIST_LAUNCHER_ENUMERATOR(enumerator, name, priority) enumerator,
  POPDIST_LAUNCHER_FAMILIES(POPDIST_LAUNCHER_ENUMERATOR)
#undef POPDIST_LAUNCHER_ENUMERATOR
};

/// The family's name from the table (e.g. "openmpi" for Launcher::OpenMpi).
[[nodiscard]] std::string_view launcher_name(Launcher launcher) noexcept;

/// The inverse of launcher_name(); std::nullopt for an unknown name.
[[nodiscard]] std::optional<Launcher> parse_launcher_name(std::string_view name) noexcept;

/// What one instance knows about the job. A plain value: copyable, comparable, printable.
struct Topology {
  Launcher launcher = Launcher::Singleton;
  int instance_index = 0;
  int num_instances = 1;
  int local_instance_index = 0;
  int num_local_instances = 1;
  std::optional<int> host_index = 0;  ///< std::nullopt when the launcher gives no node index
  int num_local_replicas = 1;
  int num_total_replicas = 1;
  int replica_index_offset = 0;
  int ipus_per_replica = 1;
  bool uniform_replicas_per_instance = true;
  bool popdist_env_set = false;       ///< isPopdistEnvSet(): POPDIST_* present or a launcher started us
  bool ipus_per_replica_set = false;  ///< POPDIST_NUM_IPUS_PER_REPLICA was set
  /// field (the JSON key, e.g. "instance_index") -> the variable that supplied it, or
  /// "default", "derived", or "mpi" (filled in by init()).
  std::map<std::string, std::string> provenance;
  /// Conflicts noticed but not fatal (e.g. a lower-priority launcher that disagrees).
  std::vector<std::string> warnings;

  friend bool operator==(const Topology& a, const Topology& b);
  friend bool operator!=(const Topology& a, const Topology& b) { return !(a == b); }
};

/// Detects the topology from an environment lookup: pure, no MPI, no I/O.
/// Throws EnvironmentError naming the variable, its value and what was expected.
/// Under POPDIST_LAUNCHER=mpi, whose identity only MPI knows, the result is a preview: instance
/// 0 of 1 (provenance "mpi (after init)") with a warning saying what init() will do.
[[nodiscard]] Topology detect(const EnvLookup& env);

/// MPI's own identity of this process, for the `mpi` launcher family: world rank and size.
struct MpiWorld {
  int rank = 0;
  int size = 1;
};

/// detect() with the `mpi` family's identity supplied by the caller (init() passes MPI's world
/// rank and size; provenance "mpi"). Still pure. For any other family `world` is ignored.
[[nodiscard]] Topology detect(const EnvLookup& env, const MpiWorld& world);

/// A multi-line human-readable description (fields with provenance, then warnings).
[[nodiscard]] std::string describe(const Topology& topology);
std::ostream& operator<<(std::ostream& out, const Topology& topology);

/// checkNumIpusPerReplica: false if POPDIST_NUM_IPUS_PER_REPLICA is set and differs from
/// `expected`; when unset, true exactly when expected == 1.
[[nodiscard]] bool check_ipus_per_replica(const Topology& topology, int expected) noexcept;

/// getDeviceId in IPU numbering (design.md §4): the id of this instance's multi-device group.
/// `ipus_per_replica` 0 takes the topology's value. Throws UsageError for a negative value, and
/// TopologyError naming the counts when the instance's devices (local replicas x devices per
/// replica) are not 1 or a power of two: IPUs are attached in groups of 1, 2, 4, 8, ...
[[nodiscard]] std::int64_t device_id(const Topology& topology, int ipus_per_replica = 0);

/// The most local device ordinals local_device_ordinals() lists (2^20): more is an error
/// instead of a vector that exhausts the memory.
inline constexpr std::int64_t max_local_devices = std::int64_t{1} << 20;

/// The local device ordinals of an instance as a range: `count` consecutive ordinals from `first`.
struct DeviceRange {
  std::int64_t first = 0;
  std::int64_t count = 1;
};

/// The range of local_device_ordinals() without listing it (no limit on its size).
[[nodiscard]] DeviceRange local_device_range(const Topology& topology) noexcept;

/// The local device ordinals this instance owns: local replicas x devices per replica
/// consecutive ordinals starting at local_instance_index x that count. Throws UsageError
/// naming the counts when there are more than max_local_devices or the last exceeds INT_MAX
/// (a UsageError: the arguments, not the job, are out of range).
[[nodiscard]] std::vector<int> local_device_ordinals(const Topology& topology);

}  // namespace popdist
