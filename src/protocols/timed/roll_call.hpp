#pragma once
// The roll call of a failed timed synchronize (timed_barrier.cpp): which members of a set are
// present, found with O(log k) messages per member when few are missing. Pure logic, no MPI: the
// caller delivers messages and the time, and sends what the roll call hands to its callback, so
// that tests/unit/test_roll_call.cpp can run it over every subset of missing members. Its shape
// (the barrier's hypercube with folds, windows that grow per level, Hold, the way out by Probe)
// and its cost: docs/guide/protocols.md, "The roll call".

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace popdist::detail {

/// The roll call's timing, from the failed call's timeout (seconds in, seconds out), shared by
/// the timed barrier and registration's handshake.
/// The window (RollCall's `window`): an eighth of the timeout within 20-125 ms: long enough for a
/// member that polls (every millisecond at most, 10 ms in a barrier's first wait) to answer on a
/// loaded machine, short enough that the levels' windows end soon after the timeout.
[[nodiscard]] double roll_call_window(double seconds) noexcept;
/// The grace: half the timeout within 50 ms - 1 s.
[[nodiscard]] double roll_call_grace(double seconds) noexcept;
/// When the roll call settles (RollCall::settle), after levels + 5 windows. A member that waits for an
/// absent one at the top level waits levels + 1 windows, one more for the fold, and answers and
/// members joining late take a little; with one member missing the levels are done by then, so
/// only the bad case (whole blocks absent, asked a window after another) settles.
[[nodiscard]] double roll_call_settle(double seconds, std::size_t members) noexcept;
/// How long the roll call lasts: its grace, or longer when its levels need it (until two windows
/// after it settles). Every member stays this long, answering those that still ask, whatever it
/// knows already.
[[nodiscard]] double roll_call_length(double seconds, std::size_t members) noexcept;

class RollCall {
 public:
  enum class Kind : std::uint8_t { Fold = 1, Request = 2, Answer = 3, Final = 4, Hold = 5, Probe = 6, Here = 7 };
  /// Present positions, bit i of byte i / 8 (bytes_for(count) bytes).
  using Bitmap = std::vector<std::uint8_t>;
  /// Sends `kind` at `level` with `present` to the member at position `to`.
  using Send = std::function<void(std::size_t to, Kind kind, int level, const Bitmap& present)>;

  [[nodiscard]] static std::size_t bytes_for(std::size_t count) noexcept { return (count + 7) / 8; }
  [[nodiscard]] static bool bit(const Bitmap& bits, std::size_t i) noexcept {
    return i / 8 < bits.size() && (bits[i / 8] >> (i % 8) & 1U) != 0;
  }
  /// Adds to `takers` the members (`members[i]` for position i) that a roll-call message marks
  /// present and its sender: the instances known to have taken part, from one message.
  static void add_takers(std::set<int>& takers, int sender, const Bitmap& present, const std::vector<int>& members) {
    takers.insert(sender);
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (bit(present, i)) takers.insert(members[i]);
    }
  }

  /// `count` members, this one at `position`; `window`: how long an asked member has to answer
  /// (any unit, the same as the times given to start, receive and poll).
  RollCall(std::size_t count, std::size_t position, double window, Send send);

  void start(double now);
  void receive(std::size_t from, Kind kind, int level, const Bitmap& present, double now);
  /// Ends the windows that have run out (asks the next members, or gives a block up as absent).
  void poll(double now);

  /// The way out when the levels take too long (whole blocks absent, each asked a window after
  /// another): asks every member whose state is still unknown directly (Probe), and a window
  /// later takes those that did not answer (Here) for absent. Every member answers a Probe at
  /// once, whatever it is doing.
  void settle(double now);

  /// Every position is known present or absent.
  [[nodiscard]] bool done() const noexcept { return role_ == Role::Done; }
  /// The positions not known present (at the end: exactly the absent ones), sorted.
  [[nodiscard]] std::vector<std::size_t> missing() const;
  /// The positions known present, as a bitmap (at the end: every member that took part).
  [[nodiscard]] Bitmap known() const;
  /// How many messages this member sent.
  [[nodiscard]] std::size_t sent() const noexcept { return sent_; }

 private:
  enum class Role { Idle, Folding, Actor, Follower, Settling, Done };
  enum class State : std::uint8_t { Unknown, Present, Absent };

  void send(std::size_t to, Kind kind, int level);
  void advance(double now);
  void begin_acting();
  void ask_next(double now);
  void finish_level();
  void finish();
  [[nodiscard]] std::size_t nearest_slot(const std::vector<std::size_t>& sorted_slots, std::size_t slot) const;
  void answer_requests();
  void hold_requests(double now);
  void merge_block(int level, const Bitmap& present);
  [[nodiscard]] std::vector<std::size_t> block(int level) const;  ///< the positions of Q_level
  [[nodiscard]] bool in_block(int level, std::size_t position) const;
  [[nodiscard]] std::vector<std::size_t> candidates(int level) const;
  /// How long the members asked at `level` have to answer: a window more than at the level below,
  /// so that a member that waited for an absent member there is not taken for absent itself.
  [[nodiscard]] double window_of(int level) const noexcept { return window_ * (level + 2); }
  [[nodiscard]] std::size_t slot_of(std::size_t position) const noexcept {
    return position < p2_ ? position : position - p2_;
  }

  std::size_t count_;
  std::size_t me_;
  double window_;
  Send send_;
  std::size_t p2_ = 1;
  int levels_ = 0;
  std::size_t slot_;
  std::vector<State> state_;
  Role role_ = Role::Idle;
  double fold_until_ = 0;
  double settle_until_ = 0;
  std::set<std::size_t> probed_by_;        ///< members this one answered a Probe
  int level_ = 0;                          ///< the actor's current level
  std::vector<std::size_t> asking_;        ///< this level's candidates, in order
  std::size_t asked_ = 0;                  ///< how many of them were asked
  double level_until_ = 0;                 ///< when the current window ends
  std::vector<std::pair<bool, Bitmap>> data_;   ///< by level: a level-s message from Q_s came
  std::map<std::pair<int, std::size_t>, double> requests_;  ///< (level, requester): when it came
  std::set<std::pair<int, std::size_t>> held_;      ///< (level, requester) told to wait
  std::vector<char> hold_;                 ///< by level: a member of Q_s said it will answer
  std::set<std::pair<int, std::size_t>> sent_at_;   ///< (level, member) sent a level message
  std::vector<char> messaged_;             ///< by position: sent anything to it
  std::size_t sent_ = 0;
};

}  // namespace popdist::detail
