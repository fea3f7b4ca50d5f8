#pragma once
// The registry: one Entry per set of instances (content-addressed, entry.hpp), names (ids) for
// sets, and lazy creation of the MPI communicator behind an entry (design.md §5.1). Built over what
// the runtime's init made (attach), and the owner of its protocols' state: the host barrier, the
// creation handshake, each set's timed rounds.

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "protocols/host_barrier/host_barrier.hpp"
#include "protocols/registration/handshake.hpp"
#include "registry/entry.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {

class Registry {
 public:
  /// Called by init() once the runtime has started: forgets everything, makes the root scope over
  /// the runtime's world with the host barrier over its host split (collective over every
  /// instance, bounded by init's watchdog), and takes POPDIST_SYNC_TIMEOUT for the barrier
  /// strategy of every set it makes. Publishes the root scope (g_root_scope_copy).
  void attach(const RuntimeState& runtime);
  /// Called by finalize() before the runtime stops: the host barrier, the timed receives, every
  /// communicator popdist owns in set order (the same on every instance), the pending sends;
  /// then forgets everything. Never throws; skips MPI calls once MPI is finalized.
  void release_all() noexcept;

  /// The root scope: all instances over the runtime's world communicator (valid between reset
  /// and release_all). Not in the content-addressed map: see reset().
  [[nodiscard]] Entry& root() noexcept { return *root_; }

  /// The entry for `participants` (validated), named `id` when not empty: UsageError when the id
  /// already names another set. No MPI call.
  Entry& find_or_add(const std::vector<int>& participants, const std::string& id, const char* function);
  /// The same for members already validated and sorted (an InstanceSet that passed its range
  /// check): no second validation.
  Entry& find_or_add_valid(std::vector<int> members, const std::string& id, const char* function);
  /// The entry an id names; UsageError for an unknown id, advising `caller.registration`.
  Entry& named(const std::string& id, const Caller& caller);

  /// Creates the communicator of an entry this instance is a member of (handshake, then
  /// MPI_Comm_create_group); a no-op once created. The handshake is bounded by `timeout`
  /// (seconds), else by POPDIST_SYNC_TIMEOUT when set: TimeoutError naming the members that did
  /// not come. `caller` is the public call that needs the communicator, for messages.
  void ensure_created(Entry& entry, std::optional<double> timeout = std::nullopt,
                      const Caller& caller = "register_communicator");

  /// The meeting of popdist's own collectives over `scope` (entry.hpp), made on first use; call
  /// with `scope.collectives_turn` held. No MPI call.
  Entry& collectives_of(Entry& scope);

 private:
  void reset(MPI_Comm world, int num_instances, int my_instance, int tag_ub,
             std::optional<double> default_timeout, double census_after);
  Entry& add_locked(std::vector<int> members);
  [[nodiscard]] std::unique_ptr<Entry> make_entry(std::vector<int> members) const;

  std::mutex maps_mutex_;      ///< the maps below; held briefly, never across MPI calls
  std::mutex creation_mutex_;  ///< one creation (handshake + MPI_Comm_create_group) at a time
  std::map<std::vector<int>, std::unique_ptr<Entry>> by_set_;
  std::map<std::string, Entry*, std::less<>> by_id_;
  std::unique_ptr<Entry> root_;  ///< published to the hot path as g_root_scope_copy (entry.hpp)
  /// Entries of past inits, never freed (the Registry itself never is): a stale pointer to one
  /// reads "not initialized" instead of freed memory.
  std::vector<std::unique_ptr<Entry>> graveyard_;
  int num_instances_ = 1;
  int my_instance_ = 0;
  int tag_ub_ = 32767;
  std::optional<double> default_timeout_;  ///< POPDIST_SYNC_TIMEOUT: every set's synchronize is timed
  MPI_Comm world_comm_ = MPI_COMM_NULL;
  Handshake handshake_;
  /// The root scope's barrier (made by attach(), freed first by release_all()).
  std::unique_ptr<HostBarrier> host_barrier_;
};

/// The registry's part of the one process state (defined in process/process_state.cpp).
Registry& registry();

}  // namespace popdist::detail
