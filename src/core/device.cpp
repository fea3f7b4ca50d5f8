// getDeviceId, the local device ordinals and checkNumIpusPerReplica (design.md §4).

#include <fmt/format.h>

#include <climits>
#include <cstdint>

#include "popdist/error.hpp"
#include "popdist/topology.hpp"

namespace popdist {
namespace {

bool is_power_of_two(std::int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

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
  // N devices; this instance's group has S = local replicas x devices per replica devices, and
  // its position among the groups of that size is its first device / S. IPUs are attached only in
  // groups of 1, 2, 4, 8, ... (as Lightning's IPU support requires), so any other S has no id:
  // rounding it up would hand out a group that overlaps the next instance's devices.
  // All in 64 bits: the products of two ints do not fit in one.
  const std::int64_t group = topology.num_local_replicas * devices;
  if (!is_power_of_two(group)) {
    throw TopologyError(fmt::format(
        "no device id for {} local replicas x {} devices per replica = {} devices per instance: IPUs are attached in "
        "groups of 1, 2, 4, 8, ... devices, so the devices of an instance must be 1 or a power of two (change the "
        "replicas per instance or the devices per replica)",
        topology.num_local_replicas, devices, group));
  }
  const std::int64_t partition = topology.num_total_replicas * devices;
  std::int64_t id = 0;
  for (std::int64_t size = 1; size < group; size *= 2) id += partition / size;
  return id + topology.replica_index_offset * devices / group;
}

DeviceRange local_device_range(const Topology& topology) noexcept {
  // Each factor is an int, so the count fits in 62 bits; the first ordinal is computed only
  // from a count that is checked first (local_device_ordinals), or saturates here.
  const std::int64_t count = static_cast<std::int64_t>(topology.num_local_replicas) * topology.ipus_per_replica;
  const std::int64_t index = topology.local_instance_index;
  const std::int64_t first = count > 0 && index > INT64_MAX / count ? INT64_MAX : index * count;
  return {first, count};
}

std::vector<int> local_device_ordinals(const Topology& topology) {
  const DeviceRange range = local_device_range(topology);
  if (range.count > max_local_devices) {
    throw UsageError(fmt::format("local_device_ordinals: {} local replicas x {} devices per replica = {} devices, "
                                    "more than the {} an instance may list",
                                    topology.num_local_replicas, topology.ipus_per_replica, range.count,
                                    max_local_devices));
  }
  // count <= 2^20 and local_instance_index <= INT_MAX: first + count fits in 64 bits.
  if (range.first + range.count - 1 > INT_MAX) {
    throw UsageError(fmt::format("local_device_ordinals: local instance {} x ({} local replicas x {} devices per "
                                    "replica) = first ordinal {}, so the last ordinal {} exceeds {}",
                                    topology.local_instance_index, topology.num_local_replicas,
                                    topology.ipus_per_replica, range.first, range.first + range.count - 1, INT_MAX));
  }
  std::vector<int> ordinals;
  ordinals.reserve(static_cast<std::size_t>(range.count));
  for (std::int64_t ordinal = range.first; ordinal < range.first + range.count; ++ordinal) {
    ordinals.push_back(static_cast<int>(ordinal));
  }
  return ordinals;
}

}  // namespace popdist
