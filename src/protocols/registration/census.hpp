#pragma once
// The census of a registration without a deadline that has waited long (handshake.cpp): how two
// instances that register the sets they share in different orders still find out when no message
// of either set reaches the other, with O(log k) messages per member per census. A roll call
// (roll_call.hpp) over the set's positions, after which each missing member is told which members
// wait (a Notice); censuses repeat, less and less often, numbered in epochs. Pure logic, no MPI,
// so that tests/unit/test_census.cpp can run it. docs/guide/protocols.md, "The census".

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "protocols/timed/roll_call.hpp"

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
