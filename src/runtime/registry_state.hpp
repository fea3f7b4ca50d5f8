#pragma once
// The registry's internals: one Entry per set of instances (content-addressed), names (ids) for
// sets, and lazy creation of the MPI communicator behind an entry (DESIGN.md 5).

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

#include "runtime/handshake.hpp"
#include "runtime/timed_rounds.hpp"

namespace popdist::detail {

/// One set of instances. Entries are never moved or deleted before finalize(), so pointers to
/// them (the root scope, the scope stacks) stay valid and the hot path needs no lookup.
struct Entry {
  std::vector<int> members;  ///< sorted
  std::uint64_t hash = 0;    ///< set_hash(members)
  std::string name;          ///< the first id it was registered under, else "{0, 1}"
  std::string handshake_id;  ///< the id sent in the creation handshake ("" when none)
  bool is_member = false;
  int arrived_tag = 0;       ///< timed synchronize tags on the control communicator
  int gave_up_tag = 0;
  /// The communicator, valid once `created` is true (release/acquire publishes it to threads).
  MPI_Comm comm = MPI_COMM_NULL;
  bool owns_comm = true;     ///< false for the root scope (its communicator is the runtime's)
  std::atomic<bool> created{false};
  /// Set when a timed synchronize over this set timed out; `abandoned_reason` is written first.
  std::atomic<bool> abandoned{false};
  std::string abandoned_reason;
  std::atomic<std::uint64_t> timed_sequence{0};
  /// The timed synchronize's buffers and requests, made on first use (timed_barrier.cpp).
  std::unique_ptr<TimedRounds> timed;
  /// Held for the duration of a timed round: two threads running one over the same set at once
  /// would share `timed`, so the second gets an error instead (MPI forbids the same of a
  /// collective on one communicator anyway).
  std::atomic<bool> timed_in_progress{false};
};

/// Bumped on every change to the registry (a set or id added, a set abandoned, init, finalize).
/// The per-thread lookup cache (registry_api.cpp) is valid only while it is unchanged, so a hit
/// needs no lock and no map lookup. Starts at 1: a cache stamped 0 is empty.
inline std::atomic<std::uint64_t> g_registry_generation{1};
inline void bump_registry_generation() noexcept { g_registry_generation.fetch_add(1, std::memory_order_acq_rel); }

class Registry {
 public:
  /// Called by init(): forgets everything and makes the root scope over `world`.
  void reset(MPI_Comm world, int num_instances, int my_instance, int tag_ub);
  /// Called by finalize(): frees every communicator popdist owns, in set order (the same on every
  /// instance), then forgets everything. Never throws; skips MPI calls once MPI is finalized.
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
  /// The entry an id names; UsageError for an unknown id.
  Entry& named(const std::string& id, const char* function);
  /// synchronize()/native_communicator()'s resolution: by participants (and id), by id, or the
  /// current scope when both are empty.
  Entry& resolve(const std::string& id, const std::vector<int>& participants, const char* function);

  /// Creates the communicator of an entry this instance is a member of (handshake, then
  /// MPI_Comm_create_group); a no-op once created. The handshake is bounded by `timeout`
  /// (seconds), else by POPDIST_SYNC_TIMEOUT when set: TimeoutError naming the members that did
  /// not come.
  void ensure_created(Entry& entry, std::optional<double> timeout = std::nullopt);

 private:
  Entry& add_locked(std::vector<int> members);
  [[nodiscard]] std::unique_ptr<Entry> make_entry(std::vector<int> members) const;

  std::mutex maps_mutex_;      ///< the maps below; held briefly, never across MPI calls
  std::mutex creation_mutex_;  ///< one creation (handshake + MPI_Comm_create_group) at a time
  std::map<std::vector<int>, std::unique_ptr<Entry>> by_set_;
  std::map<std::string, Entry*, std::less<>> by_id_;
  std::unique_ptr<Entry> root_;
  int num_instances_ = 1;
  int my_instance_ = 0;
  int tag_ub_ = 32767;
  MPI_Comm world_comm_ = MPI_COMM_NULL;
  Handshake handshake_;
};

Registry& registry();

/// Throws UsageError saying the entry was abandoned after a timed-out synchronize.
[[noreturn]] void throw_abandoned(const Entry& entry, const char* function);

}  // namespace popdist::detail
