#include "registry/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mpi/deadline.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/pending_sends.hpp"
#include "popdist/arguments.hpp"
#include "popdist/error.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/timed/timed_barrier.hpp"
#include "registry/scope.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/watchdog.hpp"

namespace popdist::detail {

void Registry::attach(const RuntimeState& runtime) {
  reset(runtime.world, runtime.size, runtime.rank, runtime.tag_ub, runtime.default_timeout, runtime.census_after);
#if defined(POPDIST_SIMULATED_MPI)
  // SimGrid SMPI runs every simulated rank in one OS thread, in turn: the host barrier's waiters
  // sleep in a futex on shared memory, which would stop the whole simulation. Simulated, the root
  // scope is an MPI_Barrier over all instances (its communicator strategy), which SMPI models.
  g_root_scope_copy.store(root_.get(), std::memory_order_release);
  return;
#endif
  {
    // The host-aware barrier behind synchronize() over all instances, timed or not: made here,
    // in init(), where every instance is known to be present, so that no synchronize has to make
    // it (a timed one could not: its creation is collective and cannot be bounded).
    // Every instance has joined MPI by now: a wait here is an instance stopped or stuck in between.
    const Watchdog watchdog(init_timeout(), "every instance to set up the host barrier in init()",
                            "every instance had joined MPI, so one stopped or is stuck in MPI_Bcast, "
                            "MPI_Allreduce or MPI_Comm_split over the job");
    host_barrier_ = std::make_unique<HostBarrier>(runtime.world, runtime.rank, runtime.host);
  }
  root_->host_barrier = host_barrier_.get();
  if (root_->strategy != BarrierStrategy::Timed) root_->strategy = BarrierStrategy::Host;
  g_root_scope_copy.store(root_.get(), std::memory_order_release);
}

void Registry::reset(MPI_Comm world, int num_instances, int my_instance, int tag_ub,
                     std::optional<double> default_timeout, double census_after) {
  std::lock_guard<std::mutex> creating(creation_mutex_);
  std::lock_guard<std::mutex> guard(maps_mutex_);
  by_set_.clear();
  by_id_.clear();
  handshake_.reset(census_after);
  num_instances_ = num_instances;
  my_instance_ = my_instance;
  tag_ub_ = tag_ub;
  default_timeout_ = default_timeout;
  world_comm_ = world;
  bump_registry_generation();
  std::vector<int> everyone(static_cast<std::size_t>(num_instances));
  for (int i = 0; i < num_instances; ++i) everyone[static_cast<std::size_t>(i)] = i;
  // The root scope (a bare synchronize() outside execute_on_instances) is not a registered set:
  // it uses the runtime's own duplicate of MPI_COMM_WORLD, with no handshake, so that it is a
  // plain MPI_Barrier from the first call. Registering the set of all instances explicitly
  // creates an ordinary entry (handshake and all, and a communicator of its own for the user's
  // MPI calls) like any other set, so that registration behaves the same whatever the set; but
  // every barrier over that set is the root's (barrier_entry, lookup.hpp: one set, one barrier).
  // Its hash is salted so that its timed-synchronize tags differ from the registered world set's.
  root_ = make_entry(std::move(everyone));
  root_->hash ^= 0x9e3779b97f4a7c15ULL;
  root_->arrived_tag = timed_tag(root_->hash, TimedKind::Arrived, tag_ub_);
  root_->gave_up_tag = timed_tag(root_->hash, TimedKind::GaveUp, tag_ub_);
  root_->name = "all instances";
  root_->comm = world;
  root_->owns_comm = false;  // finalize() frees the runtime's communicators itself
  root_->created.store(true, std::memory_order_release);
}

std::unique_ptr<Entry> Registry::make_entry(std::vector<int> members) const {
  auto entry = std::make_unique<Entry>();
  entry->hash = set_hash(members);
  entry->name = format_set(members);
  entry->is_member = std::binary_search(members.begin(), members.end(), my_instance_);
  entry->arrived_tag = timed_tag(entry->hash, TimedKind::Arrived, tag_ub_);
  entry->gave_up_tag = timed_tag(entry->hash, TimedKind::GaveUp, tag_ub_);
  if (default_timeout_) {
    entry->strategy = BarrierStrategy::Timed;
    entry->default_timeout = *default_timeout_;
  }
  entry->members = std::move(members);
  return entry;
}

Entry& Registry::collectives_of(Entry& scope) {
  if (scope.collectives) return *scope.collectives;
  auto meeting = make_entry(scope.members);
  // Salted apart from the set's own hash (and the root scope's salt): its own timed tags.
  meeting->hash = scope.hash ^ 0xc2b2ae3d27d4eb4fULL;
  meeting->arrived_tag = timed_tag(meeting->hash, TimedKind::Arrived, tag_ub_);
  meeting->gave_up_tag = timed_tag(meeting->hash, TimedKind::GaveUp, tag_ub_);
  meeting->name = scope.name;
  meeting->owns_comm = false;
  std::lock_guard<std::mutex> guard(maps_mutex_);  // release_all reads `collectives`
  scope.collectives = std::move(meeting);
  return *scope.collectives;
}

Entry& Registry::add_locked(std::vector<int> members) {
  auto entry = make_entry(members);
  auto& stored = *entry;
  by_set_.emplace(std::move(members), std::move(entry));
  return stored;
}

Entry& Registry::find_or_add(const std::vector<int>& participants, const std::string& id, const char* function) {
  return find_or_add_valid(validated_members(participants, num_instances_, function), id, function);
}

Entry& Registry::find_or_add_valid(std::vector<int> members, const std::string& id, const char* function) {
  std::lock_guard<std::mutex> guard(maps_mutex_);
  if (!id.empty()) {
    if (const auto named = by_id_.find(id); named != by_id_.end()) {
      if (named->second->members != members) {
        throw UsageError(fmt::format("{}: communicator id '{}' already names {}; it cannot also name {} (use another "
                                     "id, or none)",
                                     function, id, format_set(named->second->members), format_set(members)));
      }
      return *named->second;
    }
  }
  Entry* entry = nullptr;
  if (const auto found = by_set_.find(members); found != by_set_.end()) {
    entry = found->second.get();
  } else {
    entry = &add_locked(std::move(members));
    bump_registry_generation();
  }
  if (!id.empty()) {
    by_id_.emplace(id, entry);
    bump_registry_generation();
    // The first id a set gets is its name in messages, and the id its creation handshake
    // carries (unless the communicator exists already).
    if (entry->name.front() == '{') entry->name = id;
    if (!entry->created.load(std::memory_order_acquire) && entry->handshake_id.empty()) entry->handshake_id = id;
  }
  return *entry;
}

Entry& Registry::named(const std::string& id, const Caller& caller) {
  std::lock_guard<std::mutex> guard(maps_mutex_);
  const auto found = by_id_.find(id);
  if (found == by_id_.end()) {
    // Bounded: the id shortened, the first few registered ids (a message is never megabytes).
    std::vector<std::string> known;
    for (const auto& [name, entry] : by_id_) {
      if (known.size() == 5) {
        known.push_back(fmt::format("... ({} ids)", by_id_.size()));
        break;
      }
      known.push_back(fmt::format("'{}' {}", shown_text(name), format_set(entry->members)));
    }
    throw UsageError(fmt::format("{}: unknown communicator id '{}' ({}); register it first with "
                                 "{}(participants, '{}'), or pass the participants",
                                 caller.name, shown_text(id),
                                 known.empty() ? std::string("no ids are registered")
                                               : fmt::format("registered: {}", fmt::join(known, ", ")),
                                 caller.registration, shown_text(id)));
  }
  return *found->second;
}

void Registry::ensure_created(Entry& entry, std::optional<double> timeout, const Caller& caller) {
  if (entry.created.load(std::memory_order_acquire) || !entry.is_member) return;
  std::lock_guard<std::mutex> creating(creation_mutex_);
  if (entry.created.load(std::memory_order_acquire)) return;  // another thread made it meanwhile
  if (entry.abandoned.load(std::memory_order_acquire)) throw_abandoned(entry, caller.name);
  const auto& runtime = runtime_state();
  std::string handshake_id;
  {
    // Another thread may name the set meanwhile (find_or_add_valid writes it under this mutex).
    std::lock_guard<std::mutex> guard(maps_mutex_);
    handshake_id = entry.handshake_id;
  }
  handshake_.run(entry.members, handshake_id, my_instance_, runtime.control,
                 Deadline::after(timeout ? timeout : runtime.default_timeout), caller);

  // Only the members call MPI_Comm_create_group (MPI-3): non-members are not involved at all,
  // unlike MPI_Comm_create/MPI_Comm_split which are collective over the whole parent. The tag
  // keeps concurrent creations of different sets apart inside MPI.
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  {
    MpiLock lock;
    check_mpi(MPI_Comm_group(world_comm_, &world_group), "MPI_Comm_group");
    int code = MPI_Group_incl(world_group, static_cast<int>(entry.members.size()), entry.members.data(), &group);
    if (code == MPI_SUCCESS) {
      code = MPI_Comm_create_group(world_comm_, group, creation_tag(entry.hash, tag_ub_), &comm);
    }
    MPI_Group_free(&world_group);
    if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
    check_mpi(code, "MPI_Comm_create_group");
    // New communicators inherit the parent's handler (ours: MPI_ERRORS_RETURN); set it anyway,
    // since every call on this communicator relies on it.
    check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  entry.comm = comm;
  entry.created.store(true, std::memory_order_release);
}

void Registry::release_all() noexcept {
  std::lock_guard<std::mutex> creating(creation_mutex_);
  std::lock_guard<std::mutex> guard(maps_mutex_);
  const bool usable = mpi_is_usable();
  g_root_scope_copy.store(nullptr, std::memory_order_relaxed);
  if (root_) root_->host_barrier = nullptr;
  // Collective like the rest of finalize (MPI_Win_free): every instance finalizes.
  host_barrier_.reset();
  bump_registry_generation();
  // The GAVE_UP receives that timed synchronizes leave posted, before the control communicator
  // they listen on is freed (finalize() frees it next).
  const auto cancel = [usable](Entry& entry) {
    cancel_timed_receives(entry, usable);
    if (entry.collectives) cancel_timed_receives(*entry.collectives, usable);
  };
  for (auto& [members, entry] : by_set_) cancel(*entry);
  if (root_) cancel(*root_);
  // by_set_ is ordered by the member list, so every instance frees its communicators in the
  // same order (MPI_Comm_free is collective in the standard's terms).
  for (auto& [members, entry] : by_set_) {
    if (entry->owns_comm && entry->comm != MPI_COMM_NULL && usable) {
      MpiLock lock;
      MPI_Comm_free(&entry->comm);
    }
    entry->comm = MPI_COMM_NULL;
  }
  pending_sends().release_all();
  // Entries are kept alive (moved into the graveyard) rather than deleted: a scope stack or a
  // thread still holding a pointer then sees "not initialized" instead of freed memory.
  for (auto& [members, entry] : by_set_) graveyard_.push_back(std::move(entry));
  if (root_) graveyard_.push_back(std::move(root_));
  by_set_.clear();
  by_id_.clear();
  handshake_.reset();
}

}  // namespace popdist::detail
