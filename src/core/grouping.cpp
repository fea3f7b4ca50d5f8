// ReplicaGrouping with PopXL's rules (design.md §6; popxl/replica_grouping.py): groups of
// `group_size` replicas `stride` apart. With stride 1 the groups are consecutive blocks; with
// stride s > 1 (and s x group_size == replication_factor) group j is {j, j + s, j + 2s, ...}.

#include "popdist/grouping.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "popdist/error.hpp"

namespace popdist {

ReplicaGrouping::ReplicaGrouping(int replication_factor) : ReplicaGrouping(replication_factor, replication_factor, 1) {}

ReplicaGrouping::ReplicaGrouping(int replication_factor, int group_size, int stride)
    : replication_factor_(replication_factor), group_size_(group_size), stride_(stride) {
  const auto fail = [&](const std::string& problem) {
    throw UsageError(fmt::format("ReplicaGrouping(replication_factor={}, group_size={}, stride={}): {}",
                                 replication_factor, group_size, stride, problem));
  };
  if (replication_factor < 1) fail("replication_factor must be >= 1");
  if (group_size < 1) fail("group_size must be >= 1");
  if (stride < 1) fail("stride must be >= 1");
  if (stride == 1 && replication_factor % group_size != 0) {
    fail(fmt::format("with stride 1, replication_factor must be divisible by group_size ({} % {} = {})",
                     replication_factor, group_size, replication_factor % group_size));
  }
  if (stride != 1 && static_cast<long long>(stride) * group_size != replication_factor) {
    fail(fmt::format("with stride != 1, stride x group_size must equal replication_factor ({} x {} = {}, not {})",
                     stride, group_size, static_cast<long long>(stride) * group_size, replication_factor));
  }
  if (group_size == 1) stride_ = 1;  // one replica per group: every stride gives this partition
}

ReplicaGrouping ReplicaGrouping::with_stride(int replication_factor, int stride, std::optional<int> group_size) {
  if (group_size) return ReplicaGrouping(replication_factor, *group_size, stride);
  const auto fail = [&](const std::string& problem) {
    throw UsageError(
        fmt::format("ReplicaGrouping(replication_factor={}, stride={}): {}", replication_factor, stride, problem));
  };
  if (replication_factor < 1) fail("replication_factor must be >= 1");
  if (stride < 1) fail("stride must be >= 1");
  if (replication_factor % stride != 0) {
    fail(fmt::format("group_size defaults to replication_factor / stride, so stride must divide replication_factor "
                     "({} % {} = {}); give group_size, or a stride that divides {}",
                     replication_factor, stride, replication_factor % stride, replication_factor));
  }
  return ReplicaGrouping(replication_factor, replication_factor / stride, stride);
}

int ReplicaGrouping::group_of(int replica) const {
  if (replica < 0 || replica >= replication_factor_) {
    throw UsageError(fmt::format("ReplicaGrouping::group_of: replica={} is out of range; expected 0..{}", replica,
                                 replication_factor_ - 1));
  }
  return stride_ == 1 ? replica / group_size_ : replica % stride_;
}

std::vector<int> ReplicaGrouping::assignment() const {
  std::vector<int> groups;
  groups.reserve(static_cast<std::size_t>(replication_factor_));
  for (int replica = 0; replica < replication_factor_; ++replica) groups.push_back(group_of(replica));
  return groups;
}

std::vector<int> ReplicaGrouping::members(int group) const {
  if (group < 0 || group >= num_groups()) {
    throw UsageError(fmt::format("ReplicaGrouping::members: group={} is out of range; expected 0..{} ({} groups)",
                                 group, num_groups() - 1, num_groups()));
  }
  std::vector<int> replicas;
  replicas.reserve(static_cast<std::size_t>(group_size_));
  const int first = stride_ == 1 ? group * group_size_ : group;
  for (int k = 0; k < group_size_; ++k) replicas.push_back(first + k * stride_);
  return replicas;
}

std::vector<std::vector<int>> ReplicaGrouping::groups() const {
  std::vector<std::vector<int>> all;
  all.reserve(static_cast<std::size_t>(num_groups()));
  for (int group = 0; group < num_groups(); ++group) all.push_back(members(group));
  return all;
}

ReplicaGrouping ReplicaGrouping::transpose() const {
  // PopXL: group_size' = num_groups, stride' = 1 if stride > 1 else group_size. Under our
  // construction rules this is always representable, and the i-th members of every group form
  // group i of the result.
  return ReplicaGrouping(replication_factor_, num_groups(), stride_ > 1 ? 1 : group_size_);
}

std::vector<int> ReplicaGrouping::retrieved_replicas(RetrievalMode mode) const {
  std::vector<int> replicas;
  if (mode == RetrievalMode::OnePerGroup) {
    for (int group = 0; group < num_groups(); ++group) replicas.push_back(stride_ == 1 ? group * group_size_ : group);
  } else {
    for (int replica = 0; replica < replication_factor_; ++replica) replicas.push_back(replica);
  }
  return replicas;
}

std::vector<int> ReplicaGrouping::instances_hosting(int group, const std::vector<ReplicaRange>& ranges) const {
  const auto replicas = members(group);  // range-checks `group`
  std::vector<int> instances;
  for (const auto& range : ranges) {
    // members are ascending: the first member >= offset tells whether any falls in the range.
    const auto found = std::lower_bound(replicas.begin(), replicas.end(), range.offset);
    const long long end = static_cast<long long>(range.offset) + range.count;
    if (found != replicas.end() && *found < end) {
      instances.push_back(range.instance);
    }
  }
  std::sort(instances.begin(), instances.end());
  instances.erase(std::unique(instances.begin(), instances.end()), instances.end());
  return instances;
}

std::vector<int> ReplicaGrouping::instances_hosting(int group, const Topology& topology) const {
  if (!topology.uniform_replicas_per_instance) {
    throw UsageError(fmt::format("ReplicaGrouping::instances_hosting(group={}, topology): the topology's replicas are "
                                 "not uniform per instance; expected uniform replicas, or pass every instance's "
                                 "ReplicaRange",
                                 group));
  }
  if (topology.num_total_replicas != replication_factor_) {
    throw UsageError(fmt::format("ReplicaGrouping::instances_hosting(group={}, topology): the grouping's "
                                 "replication_factor={} differs from the topology's num_total_replicas={}; expected "
                                 "the same number of replicas",
                                 group, replication_factor_, topology.num_total_replicas));
  }
  std::vector<int> instances;
  for (const int replica : members(group)) instances.push_back(replica / topology.num_local_replicas);
  std::sort(instances.begin(), instances.end());
  instances.erase(std::unique(instances.begin(), instances.end()), instances.end());
  return instances;
}

}  // namespace popdist
