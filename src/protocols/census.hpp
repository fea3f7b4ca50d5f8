#pragma once
// The census of a registration without a deadline that has waited long (handshake.cpp,
// "Escalation"): how two instances that register the sets they share in different orders still
// find out when no message of either set reaches the other, with O(log k) messages per member per
// census where telling every member that this one waits cost k - 1.
//
// A member that has waited `after` seconds (POPDIST_CENSUS_AFTER, 30 by default) in a handshake
// starts a census: the roll call of roll_call.hpp over the set's positions, which every member
// still waiting joins as its first message reaches it. At its end each member that took part knows
// which members are missing, and each missing member is told by one of them -- the missing
// members dealt out over the present ones in position order, from the nearest present member
// before the first missing one, so that none tells more than ceil(missing / present) -- which
// members wait in the set (a Notice, with the set's list). A missing member busy with another
// set finds there a member of that set that waits in this one: the two register the sets they
// share in different orders (handshake.cpp judges it). A missing member that is not in a
// handshake keeps the notice for the sets it registers.
//
// Censuses repeat while the wait lasts, because a conflict can begin after one (both of its
// members must be waiting): the next one starts `after` x 2, 4, then 8 after the last one ended,
// so a long wait costs at most one census per 8 x `after`. They are numbered (epochs). A member
// joins a census numbered higher than its last one, takes part in its current one, and answers a
// message of an older one with the number of its own (Stale): a member that missed censuses (it
// came late, and met their messages only after its first looks) catches up at the cost of a
// message instead of running a census alone, which would ask every member. Census messages found
// in the first looks on arrival are of censuses that went on without this member: their numbers
// are noted, not joined.
//
// Pure logic, no MPI: the caller delivers messages and the time (seconds, any origin) and sends
// what the census hands to its callbacks, so that tests/unit/test_census.cpp can run it.

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "protocols/roll_call.hpp"

namespace popdist::detail {

class Census {
 public:
  using Bitmap = RollCall::Bitmap;
  /// The kind of a census message that is not the roll call's: "my census is `epoch`".
  static constexpr int kStale = 0;
  /// Sends a census message to position `to`: `kind` kStale or a RollCall::Kind.
  using Send = std::function<void(std::size_t to, int epoch, int kind, int level, const Bitmap& present)>;
  /// Tells the missing member at position `to` which positions took part (`present`).
  using Notify = std::function<void(std::size_t to, const Bitmap& present)>;

  /// `count` members, this one at `position`; the first census `after` seconds after `now`.
  Census(std::size_t count, std::size_t position, double after, double now, Send send, Notify notify);
  Census(const Census&) = delete;
  Census& operator=(const Census&) = delete;

  /// A census message found in the first looks on arrival: that census went on without this member.
  void noted_on_arrival(int epoch, double now);
  void receive(std::size_t from, int epoch, int kind, int level, const Bitmap& present, double now);
  /// Starts a census when one is due, and moves the current one on.
  void poll(double now);

  /// The number of the last census this member took part in or heard of (0: none).
  [[nodiscard]] int epoch() const noexcept { return epoch_; }
  [[nodiscard]] bool running() const noexcept { return call_.has_value(); }

 private:
  void begin(int epoch, double now);
  void end(double now);
  void after_step();
  void notify_missing();
  /// From the end of census `epoch_` to the start of the next: `after` x 2, 4, 8, 8, ...
  [[nodiscard]] double interval() const noexcept;

  std::size_t count_;
  std::size_t position_;
  double after_;
  Send send_;
  Notify notify_;
  int epoch_ = 0;
  double next_at_;
  std::optional<RollCall> call_;
  double call_start_ = 0;
  bool notified_ = false;
  std::set<std::pair<std::size_t, int>> staled_;  ///< (member, epoch) told that its census is over
};

}  // namespace popdist::detail
