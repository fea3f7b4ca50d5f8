#include "registry/lookup.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "protocols/instance_sets.hpp"
#include "registry/entry.hpp"
#include "registry/registry.hpp"
#include "registry/scope.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {
namespace {

/// The last lookup by id and/or participants made on this thread, so that a loop that calls
/// synchronize(id) or synchronize("", participants) (or execute_on_instances) over one set finds
/// it without a lock, a map lookup, a copy or a sort (work of the same order as a barrier between
/// two processes on one host, paid on every call). Valid while g_registry_generation is unchanged: ids never change their set and
/// entries are never deleted before finalize (which bumps the generation), so a hit is exact.
/// Per thread, so not in the process state; trivially constructible, so the thread_local needs no
/// initialization guard; ids longer than
/// kCachedIdLength are looked up every time.
constexpr std::size_t kCachedIdLength = 64;
struct LastLookup {
  std::uint64_t generation;  ///< g_registry_generation before the lookup that filled it; 0: empty
  Entry* entry;
  std::size_t id_length;
  char id[kCachedIdLength];
};
thread_local LastLookup t_last_lookup{};

template <typename Members>
Entry* cached_lookup(const std::string& id, const Members& participants) noexcept {
  const auto& last = t_last_lookup;
  if (last.generation != g_registry_generation.load(std::memory_order_acquire)) return nullptr;
  if (last.id_length != id.size() || std::memcmp(last.id, id.data(), id.size()) != 0) return nullptr;
  // With participants, the cached set must be exactly them (the cached entry's members are
  // sorted and unique, so equality also proves them valid); without, the id alone names it.
  if (!participants.empty() && !std::equal(participants.begin(), participants.end(), last.entry->members.begin(),
                                           last.entry->members.end())) {
    return nullptr;
  }
  return last.entry;
}

void remember_lookup(const std::string& id, Entry& entry, std::uint64_t generation) noexcept {
  if (id.size() > kCachedIdLength) return;
  auto& last = t_last_lookup;
  last.generation = generation;
  last.entry = &entry;
  last.id_length = id.size();
  std::memcpy(last.id, id.data(), id.size());
}

/// Uncached resolution of an id and/or an InstanceSet. A std::set is sorted and unique already,
/// so validation is a range check of its first and last element (the full validation runs only
/// to word the error).
Entry& resolve_uncached(const std::string& id, const InstanceSet& participants, const Caller& caller) {
  if (participants.empty()) return registry().named(id, caller);
  const int n = runtime_state().size;
  if (*participants.begin() < 0 || *participants.rbegin() >= n) {
    (void)validated_members(participants, n, caller.name);  // throws, naming them
  }
  return registry().find_or_add_valid({participants.begin(), participants.end()}, id, caller.name);
}

Entry& resolve_uncached(const std::string& id, const std::vector<int>& participants, const Caller& caller) {
  if (participants.empty()) return registry().named(id, caller);
  return registry().find_or_add(participants, id, caller.name);
}

/// synchronize()/native_communicator()'s resolution: the current scope when both `id` and
/// `participants` are empty (per thread, never cached), else the set they name, through the
/// per-thread cache.
template <typename Members>
Entry& resolve(const std::string& id, const Members& participants, const Caller& caller) {
  if (id.empty() && participants.empty()) {
    return *current_entry();
  }
  if (auto* hit = cached_lookup(id, participants)) return *hit;
  // Read before the lookup: a change made meanwhile leaves the cache stale-marked, never wrong.
  const auto generation = g_registry_generation.load(std::memory_order_acquire);
  auto& entry = resolve_uncached(id, participants, caller);
  remember_lookup(id, entry, generation);
  return entry;
}

}  // namespace

Entry& barrier_entry(Entry& entry) noexcept {
  Entry* root = g_root_scope_copy.load(std::memory_order_acquire);
  return root != nullptr && entry.members.size() == root->members.size() ? *root : entry;
}

Entry& lookup_entry(const std::string& id, const InstanceSet& participants, const Caller& caller) {
  return resolve(id, participants, caller);
}

Entry& lookup_entry(const std::string& id, const std::vector<int>& participants, const Caller& caller) {
  return resolve(id, participants, caller);
}

}  // namespace popdist::detail
