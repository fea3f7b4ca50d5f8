#pragma once
// Finding the Entry that an id and/or a set of participants name, as synchronize(),
// native_communicator(), register_communicator() and execute_on_instances() do on every call,
// through a per-thread cache of the last lookup (without it, the lookup was a mutex, a map
// lookup, and for participants two copies and a sort: a visible share of a barrier on one host).

#include <string>
#include <vector>

#include "popdist/registry.hpp"

namespace popdist::detail {

struct Entry;

/// The current scope (execute_on_instances) or the root when `id` and `participants` are both
/// empty; else the set `participants` (named `id` when not empty; UsageError when invalid or
/// when the id names another set) or, with no participants, the set `id` names (UsageError when
/// unknown). `caller` names the call in errors (caller.hpp). No MPI call.
Entry& lookup_entry(const std::string& id, const InstanceSet& participants, const Caller& caller);
/// The same for participants given as a list (the Python layer): it may be unsorted or hold
/// duplicates, so only a list equal to the cached set's sorted members hits the cache.
Entry& lookup_entry(const std::string& id, const std::vector<int>& participants, const Caller& caller);

/// The set whose barrier a looked-up set uses (synchronize, execute_on_instances): for the set
/// of all instances however it is named (participants, a registered id) the root scope's, so
/// that members naming it differently meet (one set, one barrier: design.md §5.2); else `entry`.
/// Registration and native_communicator keep the registered set's own communicator.
Entry& barrier_entry(Entry& entry) noexcept;

}  // namespace popdist::detail
