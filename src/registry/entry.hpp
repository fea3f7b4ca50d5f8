#pragma once
// One set of instances in the registry: its identity, its communicator, and its synchronize
// state (design.md §5.1).

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocols/protocol_set.hpp"

namespace popdist::detail {

/// How an untimed synchronize over a set waits, chosen when the set is made (Registry::make_entry)
/// and never changed; a call with a timeout always takes the set's timed form (timed_barrier:
/// the host barrier's timed wait when the set has one on a single host, else the recursive-doubling
/// protocol).
enum class BarrierStrategy : std::uint8_t {
  Host,          ///< the root scope: the host barrier (shared memory inside a host, leaders across)
  Communicator,  ///< one MPI_Barrier on the set's communicator, created on first use
  Timed,         ///< POPDIST_SYNC_TIMEOUT is set: every synchronize is timed, with that default
};

/// Bumped on every change to the registry (a set or id added, a set abandoned, init, finalize).
/// The per-thread lookup cache (lookup.cpp) is valid only while it is unchanged, so a hit
/// needs no lock and no map lookup. Starts at 1: a cache stamped 0 is empty.
inline std::atomic<std::uint64_t> g_registry_generation{1};
inline void bump_registry_generation() noexcept { g_registry_generation.fetch_add(1, std::memory_order_acq_rel); }

/// One set of instances: what the protocols see of it (ProtocolSet), and what only the
/// registry needs. Entries are never moved or deleted before finalize(), so pointers to them
/// (the root scope, the scope stacks) stay valid and the hot path needs no lookup.
struct Entry : ProtocolSet {
  Entry() noexcept : ProtocolSet(&bump_registry_generation) {}

  // More of its identity (the handshake id under the registry's lock).
  std::string handshake_id;  ///< the id sent in the creation handshake ("" when none)
  bool is_member = false;
  // How synchronize waits on it (fixed once made).
  BarrierStrategy strategy = BarrierStrategy::Communicator;
  double default_timeout = 0;  ///< seconds, for BarrierStrategy::Timed
  // Its communicator (registry.cpp creates it).
  /// The communicator, valid once `created` is true (release/acquire publishes it to threads).
  MPI_Comm comm = MPI_COMM_NULL;
  bool owns_comm = true;  ///< false for the root scope (its communicator is the runtime's)
  std::atomic<bool> created{false};
  // The meeting of popdist's own collectives over the set (collective_meeting.hpp).
  /// The same members under another hash, so other tags: a collective's meeting and a
  /// synchronize never complete each other. Made on first use (Registry::collectives_of).
  /// Its `operation` (ProtocolSet) names the collective that meets in it now.
  std::unique_ptr<Entry> collectives;
  std::mutex collectives_turn;  ///< on a set's own entry: one collective's meeting at a time
};

/// The hot-path copy of the Registry's root scope (all instances), what synchronize() reads on
/// every call: a constant-initialized global (no guard, no call). Written by Registry::attach()
/// and Registry::release_all() only (init() and finalize(), under the lifecycle mutex); read after
/// an acquire of g_hot.initialized, which init() stores last.
inline std::atomic<Entry*> g_root_scope_copy{nullptr};

}  // namespace popdist::detail
