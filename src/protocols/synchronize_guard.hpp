#pragma once
// Several threads of one instance calling synchronize over the same set. MPI forbids two threads
// of a process to run collectives on one communicator at once, and popdist's barriers keep per-set
// state besides (the host barrier's slot, the timed rounds' buffers): two threads of one instance
// inside one barrier would pair with the wrong arrivals and deadlock (4 threads calling an untimed
// synchronize() did in 4 runs of 10). So the calls take turns: each is one whole barrier, in the
// order the threads get the set's mutex, and every instance makes as many as it has calls. A timed
// synchronize does not wait for a turn: it refuses at once, naming the set, so that its deadline
// means what it says.

#include <fmt/format.h>

#include <mutex>

#include "popdist/error.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/protocol_set.hpp"

namespace popdist::detail {

/// An untimed synchronize's turn: blocks while another thread of this instance is in a
/// synchronize over the same set (uncontended, one lock and one unlock).
using UntimedTurn = std::lock_guard<std::mutex>;

/// A timed synchronize's turn: UsageError when another thread of this instance holds the set.
class TimedTurn {
 public:
  explicit TimedTurn(ProtocolSet& entry) : entry_(entry) {
    if (!entry.synchronize_turn.try_lock()) throw_busy(entry);
  }
  ~TimedTurn() { entry_.synchronize_turn.unlock(); }
  TimedTurn(const TimedTurn&) = delete;
  TimedTurn& operator=(const TimedTurn&) = delete;

 private:
  [[noreturn, gnu::noinline, gnu::cold]] static void throw_busy(const ProtocolSet& entry) {
    throw UsageError(fmt::format("synchronize over {} ('{}'): another thread of this instance is already in a "
                                 "synchronize over this set, and a timed synchronize does not wait for its turn; "
                                 "one synchronize per set at a time (MPI's rule for the collectives of one "
                                 "communicator): order the threads' calls, or give each thread a set of its own",
                                 format_set(entry.members), entry.name));
  }

  ProtocolSet& entry_;
};

}  // namespace popdist::detail
