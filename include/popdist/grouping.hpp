#pragma once
/// @file grouping.hpp
/// Replica grouping with PopXL's rules (design.md §6).

#include <optional>
#include <vector>

#include "popdist/topology.hpp"

namespace popdist {

/// Which replicas a grouped variable's read returns.
enum class RetrievalMode { OnePerGroup, AllReplicas };

/// The replicas [offset, offset + count) driven by one instance.
struct ReplicaRange {
  int instance = 0;
  int offset = 0;
  int count = 1;
};

/// Replicas 0..replication_factor-1 split into groups of `group_size` members `stride` apart.
/// When stride == 1, replication_factor must be divisible by group_size; otherwise
/// stride x group_size must equal replication_factor. Violations throw UsageError naming the rule.
/// Groups of one replica are the same partition whatever the stride: they are stored with stride 1
/// (as PopART does), so that equal partitions compare equal.
class ReplicaGrouping {
 public:
  /// One group holding every replica.
  explicit ReplicaGrouping(int replication_factor);
  ReplicaGrouping(int replication_factor, int group_size, int stride = 1);

  /// PopXL's `ir.replica_grouping(stride, group_size)`: the stride first, and a group_size left
  /// out defaults to replication_factor / stride (so stride 4 over 16 replicas is four groups of
  /// four, and no arguments at all is one group of everyone).
  [[nodiscard]] static ReplicaGrouping with_stride(int replication_factor, int stride = 1,
                                                   std::optional<int> group_size = std::nullopt);

  [[nodiscard]] int replication_factor() const noexcept { return replication_factor_; }
  [[nodiscard]] int group_size() const noexcept { return group_size_; }
  [[nodiscard]] int stride() const noexcept { return stride_; }
  [[nodiscard]] int num_groups() const noexcept { return replication_factor_ / group_size_; }

  /// The group that replica `replica` belongs to.
  [[nodiscard]] int group_of(int replica) const;
  /// Every replica's group, replica by replica (PopXL's `assignment`).
  [[nodiscard]] std::vector<int> assignment() const;
  /// The replicas of group `group`, ascending.
  [[nodiscard]] std::vector<int> members(int group) const;
  /// Every group's members, group by group.
  [[nodiscard]] std::vector<std::vector<int>> groups() const;
  /// The orthogonal grouping: the i-th members of every group form group i.
  [[nodiscard]] ReplicaGrouping transpose() const;
  /// The replicas a read returns: the first of each group, or all of them.
  [[nodiscard]] std::vector<int> retrieved_replicas(RetrievalMode mode) const;
  /// The instances hosting a member of `group`, ascending, given every instance's range.
  [[nodiscard]] std::vector<int> instances_hosting(int group, const std::vector<ReplicaRange>& ranges) const;
  /// The same under uniform replicas: instance i hosts [i x local, (i + 1) x local).
  [[nodiscard]] std::vector<int> instances_hosting(int group, const Topology& topology) const;

  friend bool operator==(const ReplicaGrouping& a, const ReplicaGrouping& b) noexcept {
    return a.replication_factor_ == b.replication_factor_ && a.group_size_ == b.group_size_ &&
           a.stride_ == b.stride_;
  }
  friend bool operator!=(const ReplicaGrouping& a, const ReplicaGrouping& b) noexcept { return !(a == b); }

 private:
  int replication_factor_;
  int group_size_;
  int stride_;
};

}  // namespace popdist
