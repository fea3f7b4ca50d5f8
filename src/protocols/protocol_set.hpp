#pragma once
// One set of instances as the synchronize protocols see it: its members, tags and per-set state.
// The registry's Entry (registry/entry.hpp) is one of these plus what only the registry needs, so
// the protocols take a ProtocolSet and include nothing from the registry above them.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocols/timed/timed_rounds.hpp"

namespace popdist::detail {

class HostBarrier;

struct ProtocolSet {
  /// `on_abandoned`: called once when a timed wait abandons the set (the registry invalidates
  /// its lookup cache, whose hits must then see the set abandoned).
  explicit ProtocolSet(void (*on_abandoned)() noexcept) noexcept : on_abandoned(on_abandoned) {}
  ProtocolSet(const ProtocolSet&) = delete;
  ProtocolSet& operator=(const ProtocolSet&) = delete;

  // The set's identity (fixed once made; the name under the registry's lock).
  std::vector<int> members;  ///< sorted
  std::uint64_t hash = 0;    ///< set_hash(members)
  std::string name;          ///< the first id it was registered under, else "{0, 1}"
  /// On the meeting of popdist's own collectives over a set (collective_meeting.hpp): the
  /// operation that meets in it now, for notices and errors ("" on a set's own entry:
  /// synchronize). Written under the set's collectives turn.
  std::string operation;
  int arrived_tag = 0;  ///< timed synchronize tags on the control communicator
  int gave_up_tag = 0;
  HostBarrier* host_barrier = nullptr;  ///< the registry's host barrier, for the root scope only
  // Its synchronize state (timed_barrier.cpp).
  /// Set when a timed synchronize over this set timed out; `abandoned_reason` is written first.
  std::atomic<bool> abandoned{false};
  std::string abandoned_reason;
  void (*on_abandoned)() noexcept;
  std::atomic<std::uint64_t> timed_sequence{0};
  /// The timed synchronize's buffers and requests, made on first use (timed_barrier.cpp).
  std::unique_ptr<TimedRounds> timed;
  /// The root scope's rounds among the hosts' leaders, on a leader, made on first use
  /// (timed_hosts.cpp: a timed synchronize over all instances across hosts).
  std::unique_ptr<TimedRounds> timed_leaders;
  /// Held for the duration of any synchronize over the set (synchronize_guard.hpp): the threads
  /// of one instance take turns, so that each call is one whole barrier.
  std::mutex synchronize_turn;
};

/// Throws UsageError saying the set was abandoned after a timed-out synchronize.
[[noreturn]] void throw_abandoned(const ProtocolSet& set, const char* function);

}  // namespace popdist::detail
