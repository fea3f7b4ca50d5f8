#include "runtime/instance_record.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "popdist/error.hpp"

namespace popdist::detail {
namespace {

// "instances 0, 2 say 4; instance 1 says 3": who holds which value, for disagreement messages.
template <class Value>
std::string who_says_what(const std::map<Value, std::vector<int>>& holders) {
  std::vector<std::string> parts;
  for (const auto& [value, instances] : holders) {
    parts.push_back(fmt::format("{} {} {} {}", instances.size() == 1 ? "instance" : "instances",
                                fmt::join(instances, ", "), instances.size() == 1 ? "says" : "say", value));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

template <class Field>
void check_same_everywhere(const std::vector<InstanceRecord>& records, Field field, const char* what,
                           const char* variable) {
  std::map<int, std::vector<int>> holders;
  for (std::size_t rank = 0; rank < records.size(); ++rank) {
    holders[field(records[rank])].push_back(static_cast<int>(rank));
  }
  if (holders.size() > 1) {
    throw TopologyError(fmt::format("the instances disagree about {} ({}): {}; every instance must see the same value",
                                    what, variable, who_says_what(holders)));
  }
}

}  // namespace

void copy_text(char* destination, std::size_t capacity, const std::string& text) {
  const auto length = std::min(text.size(), capacity - 1);
  std::memcpy(destination, text.data(), length);
  destination[length] = '\0';
}

InstanceRecord make_record(const Topology& topology) {
  InstanceRecord record;
  record.launcher = static_cast<std::int32_t>(topology.launcher);
  record.instance_index = topology.instance_index;
  record.num_instances = topology.num_instances;
  record.replica_index_offset = topology.replica_index_offset;
  record.num_local_replicas = topology.num_local_replicas;
  record.num_total_replicas = topology.num_total_replicas;
  record.ipus_per_replica = topology.ipus_per_replica;
  record.launcher_local_index = topology.local_instance_index;
  record.launcher_local_count = topology.num_local_instances;
  record.launcher_host_index = topology.host_index.value_or(-1);
  const auto said = said_by_launcher(topology);
  record.launcher_said_local = said.local_index ? 1 : 0;
  record.launcher_said_local_count = said.local_count ? 1 : 0;
  record.launcher_said_host = said.host ? 1 : 0;
  record.uniform = topology.uniform_replicas_per_instance ? 1 : 0;
  record.popdist_env_set = topology.popdist_env_set ? 1 : 0;
  record.ipus_per_replica_set = topology.ipus_per_replica_set ? 1 : 0;
  return record;
}

InstanceRecord make_failed_record(const std::string& type, const std::string& message) {
  InstanceRecord record;
  record.failed = 1;
  copy_text(record.error_type, sizeof record.error_type, type);
  copy_text(record.error, sizeof record.error, message);
  return record;
}

std::vector<int> failed_ranks(const std::vector<InstanceRecord>& records) {
  std::vector<int> failed;
  for (std::size_t rank = 0; rank < records.size(); ++rank) {
    if (records[rank].failed != 0) {
      failed.push_back(static_cast<int>(rank));
    }
  }
  return failed;
}

void check_records(const std::vector<InstanceRecord>& records) {
  const auto n = static_cast<int>(records.size());
  // Instance index == MPI rank: the registry names MPI ranks by instance index. (init() also
  // checks this locally with the launcher variables in the message; this catches records
  // built by other means, e.g. in the unit tests.)
  for (int rank = 0; rank < n; ++rank) {
    const auto& record = records[static_cast<std::size_t>(rank)];
    if (record.num_instances != n) {
      throw TopologyError(fmt::format("instance at MPI rank {} counts {} instances but MPI has {} processes", rank,
                                      record.num_instances, n));
    }
  }
  std::map<int, std::vector<int>> ranks_of_index;
  for (int rank = 0; rank < n; ++rank) {
    ranks_of_index[records[static_cast<std::size_t>(rank)].instance_index].push_back(rank);
  }
  for (const auto& [index, ranks] : ranks_of_index) {
    if (ranks.size() > 1) {
      throw TopologyError(fmt::format("instance indices are not a permutation of 0..{}: MPI ranks {} all claim "
                                      "instance index {}",
                                      n - 1, fmt::join(ranks, ", "), index));
    }
    if (index < 0 || index >= n) {
      throw TopologyError(fmt::format("instance indices are not a permutation of 0..{}: MPI rank {} claims "
                                      "instance index {}",
                                      n - 1, ranks.front(), index));
    }
  }
  for (int rank = 0; rank < n; ++rank) {
    const auto index = records[static_cast<std::size_t>(rank)].instance_index;
    if (index != rank) {
      throw TopologyError(
          fmt::format("MPI rank {} is instance {} by its launcher; popdist needs instance index == MPI rank", rank, index));
    }
  }

  check_same_everywhere(records, [](const InstanceRecord& r) { return r.num_total_replicas; },
                        "the total number of replicas", "POPDIST_NUM_TOTAL_REPLICAS");
  check_same_everywhere(records, [](const InstanceRecord& r) { return r.ipus_per_replica; },
                        "the number of devices per replica", "POPDIST_NUM_IPUS_PER_REPLICA");

  // The ranges [offset, offset + local) must tile 0..total-1: sorted by offset, each starts
  // where the previous one ended, the first at 0 and the last ends at total.
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& ra = records[static_cast<std::size_t>(a)];
    const auto& rb = records[static_cast<std::size_t>(b)];
    return std::tie(ra.replica_index_offset, a) < std::tie(rb.replica_index_offset, b);
  });
  const auto range_text = [&](int instance) {
    const auto& r = records[static_cast<std::size_t>(instance)];
    return fmt::format("instance {} has replicas [{}, {})", instance, r.replica_index_offset,
                       r.replica_index_offset + r.num_local_replicas);
  };
  const auto total = records.front().num_total_replicas;
  int expected_start = 0;
  int previous = -1;
  for (const auto instance : order) {
    const auto& r = records[static_cast<std::size_t>(instance)];
    if (r.replica_index_offset > expected_start) {
      throw TopologyError(fmt::format(
          "the replica ranges do not tile 0..{}: replicas {}..{} belong to no instance ({}{})", total - 1,
          expected_start, r.replica_index_offset - 1, previous < 0 ? "" : range_text(previous) + ", ",
          range_text(instance)));
    }
    if (r.replica_index_offset < expected_start) {
      throw TopologyError(fmt::format("the replica ranges do not tile 0..{}: they overlap ({} and {})", total - 1,
                                      range_text(previous), range_text(instance)));
    }
    expected_start = r.replica_index_offset + r.num_local_replicas;
    previous = instance;
  }
  if (expected_start != total) {
    throw TopologyError(fmt::format("the replica ranges do not tile 0..{}: {} of {} replicas are covered (the last "
                                    "range: {})",
                                    total - 1, expected_start, total, range_text(previous)));
  }
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

bool supplied_by_variable(const Topology& topology, const std::string& field) {
  const auto found = topology.provenance.find(field);
  if (found == topology.provenance.end()) return false;
  const auto& source = found->second;
  return !source.empty() && source != "default" && source != "derived" && source != "mpi";
}

SaidByLauncher said_by_launcher(const Topology& topology) {
  SaidByLauncher said;
  said.local_index = supplied_by_variable(topology, "local_instance_index");
  said.local_count = supplied_by_variable(topology, "num_local_instances");
  said.host = topology.host_index.has_value() && supplied_by_variable(topology, "host_index");
  return said;
}

std::vector<std::string> apply_placement(Topology& topology, SaidByLauncher said, const HostPlacement& placement) {
  std::vector<std::string> warnings;
  const auto source = [&](const char* field) {
    const auto found = topology.provenance.find(field);
    return found == topology.provenance.end() ? std::string("?") : found->second;
  };
  if (!said.local_index) {
    topology.local_instance_index = placement.local_instance_index;
    topology.provenance["local_instance_index"] = "mpi";
  } else if (topology.local_instance_index != placement.local_instance_index) {
    warnings.push_back(fmt::format("the launcher says local instance index {} ({}), but MPI's shared-memory split "
                                   "says {}; keeping the launcher's value",
                                   topology.local_instance_index, source("local_instance_index"),
                                   placement.local_instance_index));
  }
  if (!said.local_count) {
    topology.num_local_instances = placement.num_local_instances;
    topology.provenance["num_local_instances"] = "mpi";
  } else if (topology.num_local_instances != placement.num_local_instances) {
    warnings.push_back(fmt::format("the launcher says {} local instances ({}), but MPI's shared-memory split says {}; "
                                   "keeping the launcher's value",
                                   topology.num_local_instances, source("num_local_instances"),
                                   placement.num_local_instances));
  }
  if (!said.host) {
    topology.host_index = placement.host_index;
    topology.provenance["host_index"] = "mpi";
  } else if (topology.host_index != placement.host_index) {
    warnings.push_back(fmt::format("the launcher says host {} ({}), but MPI's shared-memory split makes it host {}; "
                                   "keeping the launcher's value",
                                   topology.host_index.value_or(-1), source("host_index"), placement.host_index));
  }
  return warnings;
}

Topology topology_of(const InstanceRecord& record, const HostPlacement& placement) {
  Topology topology;
  topology.launcher = static_cast<Launcher>(record.launcher);
  topology.instance_index = record.instance_index;
  topology.num_instances = record.num_instances;
  topology.local_instance_index = record.launcher_local_index;
  topology.num_local_instances = record.launcher_local_count;
  topology.host_index = record.launcher_host_index >= 0 ? std::optional<int>(record.launcher_host_index) : std::nullopt;
  topology.num_local_replicas = record.num_local_replicas;
  topology.num_total_replicas = record.num_total_replicas;
  topology.replica_index_offset = record.replica_index_offset;
  topology.ipus_per_replica = record.ipus_per_replica;
  topology.uniform_replicas_per_instance = record.uniform != 0;
  topology.popdist_env_set = record.popdist_env_set != 0;
  topology.ipus_per_replica_set = record.ipus_per_replica_set != 0;
  SaidByLauncher said;
  said.local_index = record.launcher_said_local != 0;
  said.local_count = record.launcher_said_local_count != 0;
  said.host = record.launcher_said_host != 0;
  topology.warnings = apply_placement(topology, said, placement);
  return topology;
}

}  // namespace popdist::detail
