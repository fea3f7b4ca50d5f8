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

using detail::Caller;
using detail::Entry;

void register_entry(Entry& entry, const Caller& caller, std::optional<Seconds> timeout = std::nullopt) {
  if (!entry.is_member) return;  // non-members only learn the name: no MPI call
  if (entry.abandoned.load(std::memory_order_acquire)) detail::throw_abandoned(entry, caller.name);
  detail::registry().ensure_created(entry, timeout ? std::optional<double>(timeout->count()) : std::nullopt, caller);
}

void register_members(const std::vector<int>& participants, const std::string& id, const Caller& caller) {
  detail::require_initialized(caller.name);
  register_entry(detail::registry().find_or_add(participants, id, caller.name), caller);
}

MPI_Comm communicator_of(Entry& entry, const Caller& caller) {
  if (!entry.is_member) return MPI_COMM_NULL;
  if (entry.abandoned.load(std::memory_order_acquire)) detail::throw_abandoned(entry, caller.name);
  detail::registry().ensure_created(entry, std::nullopt, caller);
  return entry.comm;
}

}  // namespace

void register_communicator(const InstanceSet& participants, const std::string& communicator_id,
                           std::optional<Seconds> timeout) {
  detail::register_communicator(participants, communicator_id, timeout, "register_communicator");
}

InstanceSet current_scope() {
  if (const auto* entry = detail::current_entry()) return {entry->members.begin(), entry->members.end()};
  InstanceSet everyone;
  for (int i = 0; i < num_instances(); ++i) everyone.insert(i);
  return everyone;
}

MPI_Comm native_communicator(const std::string& communicator_id, const InstanceSet& participants) {
  return detail::native_communicator(communicator_id, participants, "native_communicator");
}

std::map<int, std::string> register_grouping_communicators(const ReplicaGrouping& grouping) {
  return detail::register_grouping_communicators(grouping, "register_grouping_communicators");
}

namespace detail {

void register_communicator(const InstanceSet& participants, const std::string& communicator_id,
                           std::optional<Seconds> timeout, const Caller& caller) {
  require_initialized(caller.name);
  if (timeout) check_timeout_argument(timeout->count());
  // Empty participants are an error here (the lookup would take them as "by id" or the scope).
  if (participants.empty()) {
    register_members({}, communicator_id, caller);
    return;
  }
  register_entry(lookup_entry(communicator_id, participants, caller), caller, timeout);
}

MPI_Comm native_communicator(const std::string& communicator_id, const InstanceSet& participants,
                             const Caller& caller) {
  require_initialized(caller.name);
  return communicator_of(lookup_entry(communicator_id, participants, caller), caller);
}

std::map<int, std::string> register_grouping_communicators(const ReplicaGrouping& grouping, const Caller& caller) {
  require_initialized(caller.name);
  const auto total = num_total_replicas();
  if (grouping.replication_factor() != total) {
    throw UsageError(fmt::format("{}: the grouping's replication factor {} does not match the job's {} replicas "
                                 "(POPDIST_NUM_TOTAL_REPLICAS)",
                                 caller.name, grouping.replication_factor(), total));
  }
  const auto ranges = replica_ranges();
  const auto me = instance_index();
  std::map<int, std::string> mine;
  // Every instance registers every group in group order (SPMD): members create, non-members
  // only learn the names. The order is the same everywhere, which the handshake requires for
  // groups whose host sets overlap. Errors name the registration call, as before.
  const Caller registering(caller.registration, caller.registration);
  for (int group = 0; group < grouping.num_groups(); ++group) {
    const auto hosts = grouping.instances_hosting(group, ranges);
    const auto id = fmt::format("replica-grouping({},{},{})/group{}", grouping.replication_factor(),
                                grouping.group_size(), grouping.stride(), group);
    register_members(hosts, id, registering);
    if (std::binary_search(hosts.begin(), hosts.end(), me)) mine.emplace(group, id);
  }
  return mine;
}

}  // namespace detail

}  // namespace popdist
