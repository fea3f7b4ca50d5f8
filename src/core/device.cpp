// getDeviceId, the local device ordinals and checkNumIpusPerReplica (DESIGN.md 4).

#include <fmt/format.h>

#include <climits>
#include <cstdint>

#include "popdist/error.hpp"
#include "popdist/topology.hpp"

namespace popdist {
namespace {

std::int64_t next_power_of_two(std::int64_t value) {
  std::int64_t power = 1;
  while (power < value) power *= 2;
  return power;
}

}  // namespace

bool check_ipus_per_replica(const Topology& topology, int expected) noexcept {
  return topology.ipus_per_replica_set ? topology.ipus_per_replica == expected : expected == 1;
}

std::int64_t device_id(const Topology& topology, int ipus_per_replica) {
  if (ipus_per_replica < 0) {
    throw UsageError(fmt::format("device_id: ipus_per_replica={} is negative; expected 0 (take the topology's {}) or "
                                 "a number of devices per replica >= 1",
                                 ipus_per_replica, topology.ipus_per_replica));
  }
  const std::int64_t devices = ipus_per_replica == 0 ? topology.ipus_per_replica : ipus_per_replica;
  // IPU numbering lists the single devices first, then the groups of 2, 4, ... of a partition of
  // N devices; this instance's group has S devices (its share rounded up to a power of two), and
  // its position among the groups of that size is its first device / S. All in 64 bits: the
  // products of two ints do not fit in one.
  const std::int64_t group = next_power_of_two(topology.num_local_replicas * devices);
  const std::int64_t partition = topology.num_total_replicas * devices;
  std::int64_t id = 0;
  for (std::int64_t size = 1; size < group; size *= 2) id += partition / size;
  return id + topology.replica_index_offset * devices / group;
}

std::vector<int> local_device_ordinals(const Topology& topology) {
  const std::int64_t count = static_cast<std::int64_t>(topology.num_local_replicas) * topology.ipus_per_replica;
  const std::int64_t first = topology.local_instance_index * count;
  if (first + count - 1 > INT_MAX) {
    throw UsageError(fmt::format("local_device_ordinals: local instance {} x ({} local replicas x {} devices per "
                                 "replica) = first ordinal {}, so the last ordinal {} exceeds {}",
                                 topology.local_instance_index, topology.num_local_replicas, topology.ipus_per_replica,
                                 first, first + count - 1, INT_MAX));
  }
  std::vector<int> ordinals;
  ordinals.reserve(static_cast<std::size_t>(count));
  for (std::int64_t ordinal = first; ordinal < first + count; ++ordinal) ordinals.push_back(static_cast<int>(ordinal));
  return ordinals;
}

}  // namespace popdist
