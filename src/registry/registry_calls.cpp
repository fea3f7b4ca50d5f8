// The calls of the public registry.hpp but synchronize (synchronize.cpp) and execute_on_instances
// (execute_on_instances.cpp): registration and the native communicator, with the non-member
// policy. Finding the set an id or participants name lives in lookup.cpp, creation in
// registry.cpp, the protocols in protocols/.
#include <fmt/format.h>

#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "popdist/registry.hpp"
#include "popdist/runtime.hpp"
#include "protocols/instance_sets.hpp"
#include "registry/lookup.hpp"
#include "registry/registry.hpp"
#include "registry/scope.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist {
namespace {

using detail::Entry;

void register_entry(Entry& entry, std::optional<Seconds> timeout = std::nullopt) {
  if (!entry.is_member) return;  // non-members only learn the name: no MPI call
  if (entry.abandoned.load(std::memory_order_acquire)) detail::throw_abandoned(entry, "register_communicator");
  detail::registry().ensure_created(entry, timeout ? std::optional<double>(timeout->count()) : std::nullopt);
}

void register_members(const std::vector<int>& participants, const std::string& id) {
  detail::require_initialized("register_communicator");
  register_entry(detail::registry().find_or_add(participants, id, "register_communicator"));
}

MPI_Comm communicator_of(Entry& entry) {
  if (!entry.is_member) return MPI_COMM_NULL;
  if (entry.abandoned.load(std::memory_order_acquire)) detail::throw_abandoned(entry, "native_communicator");
  detail::registry().ensure_created(entry, std::nullopt, "native_communicator");
  return entry.comm;
}

}  // namespace

void register_communicator(const InstanceSet& participants, const std::string& communicator_id,
                           std::optional<Seconds> timeout) {
  detail::require_initialized("register_communicator");
  if (timeout) detail::check_timeout_argument(timeout->count());
  // Empty participants are an error here (the lookup would take them as "by id" or the scope).
  if (participants.empty()) {
    register_members({}, communicator_id);
    return;
  }
  register_entry(detail::lookup_entry(communicator_id, participants, "register_communicator"), timeout);
}

InstanceSet current_scope() {
  if (const auto* entry = detail::current_entry()) return {entry->members.begin(), entry->members.end()};
  InstanceSet everyone;
  for (int i = 0; i < num_instances(); ++i) everyone.insert(i);
  return everyone;
}

MPI_Comm native_communicator(const std::string& communicator_id, const InstanceSet& participants) {
  detail::require_initialized("native_communicator");
  return communicator_of(detail::lookup_entry(communicator_id, participants, "native_communicator"));
}

std::map<int, std::string> register_grouping_communicators(const ReplicaGrouping& grouping) {
  detail::require_initialized("register_grouping_communicators");
  const auto total = num_total_replicas();
  if (grouping.replication_factor() != total) {
    throw UsageError(fmt::format("register_grouping_communicators: the grouping's replication factor {} does not match "
                                 "the job's {} replicas (POPDIST_NUM_TOTAL_REPLICAS)",
                                 grouping.replication_factor(), total));
  }
  const auto ranges = replica_ranges();
  const auto me = instance_index();
  std::map<int, std::string> mine;
  // Every instance registers every group in group order (SPMD): members create, non-members
  // only learn the names. The order is the same everywhere, which the handshake requires for
  // groups whose host sets overlap.
  for (int group = 0; group < grouping.num_groups(); ++group) {
    const auto hosts = grouping.instances_hosting(group, ranges);
    const auto id = fmt::format("replica-grouping({},{},{})/group{}", grouping.replication_factor(),
                                grouping.group_size(), grouping.stride(), group);
    register_members(hosts, id);
    if (std::binary_search(hosts.begin(), hosts.end(), me)) mine.emplace(group, id);
  }
  return mine;
}

}  // namespace popdist
