#pragma once
// The one skeleton of a timed synchronize over MPI, for both of its rounds: the flat round over a
// set's members (timed_barrier.cpp) and the round across hosts (timed_hosts.cpp). TimedWait owns
// the five steps of docs/guide/protocols.md, "The timed barrier", and the races they close (a
// member that gave up before this one came, a roll call that starts during the wait, the late
// look); a round supplies only how it arrives, polls, pauses and gives up (the hooks below).

#include <mpi.h>

#include <optional>
#include <utility>
#include <vector>

#include "mpi/clock.hpp"
#include "mpi/interrupts.hpp"
#include "protocols/protocol_set.hpp"
#include "protocols/synchronize_guard.hpp"
#include "protocols/timed/timed_failure.hpp"
#include "protocols/timed/timed_rounds.hpp"
#include "protocols/timed/waited_in.hpp"

namespace popdist::detail {

/// Where a round stands after a poll: still waiting, met, or given up (by an instance that
/// shares this one's part of the round: another instance of its host).
enum class RoundProgress { Waiting, Met, GivenUp };

/// A timed wait over a set, its steps in run(). `Form` derives from TimedWait<Form> and gives it:
///   std::vector<int> arrive();   step 1: count this instance in, send what can be sent; returns
///                                the members that had given the round up before (empty: none)
///   RoundProgress poll();        step 3: take what came in, send what is ready
///   bool give_up();              end this instance's part of the round; false when the round was
///                                met meanwhile (a host released by its leader): then it counts as met
///   void pause(MpiClock::duration waited, int polls);  between two polls
///   void end_exchange();         before the failure path
///   double shortest_timeout();   the shortest of the members' timeouts it heard of (step 5)
///   static constexpr bool kFailsOnOtherOperation: a member found waiting over the same members in
///                                another popdist operation ends the wait at once (waited_in.hpp)
/// Made with the set's turn held (the first member); the round's destruction cancels what it
/// still has posted.
template <class Form>
class TimedWait {
 public:
  TimedWait(const TimedWait&) = delete;
  TimedWait& operator=(const TimedWait&) = delete;

  void run(MpiClock::time_point deadline) {
    if (const auto givers = form().arrive(); !givers.empty()) throw_others_gave_up(entry_, givers, seconds_, me_);
    fail_if_given_up_already();
    const bool met = wait_for_round(deadline);
    form().end_exchange();
    // 4. Timed out, or a roll call started (another member gave up) while the round was not met.
    if (!met) roll_call_and_fail(entry_, rounds_, mine_, std::move(early_), seconds_, control_);
    look_if_late(deadline);
  }

 protected:
  TimedWait(ProtocolSet& entry, double seconds, MpiClock::time_point start, int me, MPI_Comm control)
      : turn_(entry),
        entry_(entry),
        rounds_(rounds_of(entry, me, control)),
        control_(control),
        me_(me),
        seconds_(seconds),
        start_(start),
        mine_{entry.hash, entry.timed_sequence.fetch_add(1) + 1, seconds},
        previous_start_(rounds_.begin_round(start)),
        last_answer_(start) {}
  ~TimedWait() = default;

  const TimedTurn turn_;
  ProtocolSet& entry_;
  TimedRounds& rounds_;  ///< the set's: its GAVE_UP receive, and the flat round's steps
  const MPI_Comm control_;
  const int me_;
  const double seconds_;
  const MpiClock::time_point start_;
  const Round mine_;  ///< this round's ARRIVED payload, as first sent

 private:
  Form& form() { return static_cast<Form&>(*this); }

  // 2. Had a member given up on us already (we are the late one, or it gave up on an earlier
  //    round that we completed: the race of the guide)? Looked at once this instance is counted in
  //    and its first message is out, so that the MPI progress pass this takes delays nobody; that
  //    pass also takes in whatever has arrived, so a late instance sees the notices sent to it.
  void fail_if_given_up_already() {
    if (const auto heard = test_gave_up(entry_, rounds_, control_); !heard.empty()) {
      form().give_up();
      throw_others_gave_up(entry_, givers_of(entry_, heard, me_), seconds_, me_);
    }
  }

  // 3. Poll the round until it is met, the deadline, or -- looked at only once the wait has
  //    lasted kYieldFor -- a GAVE_UP (the guide: "Why it is shaped for speed"). True: met.
  bool wait_for_round(MpiClock::time_point deadline) {
    for (int polls = 0;; ++polls) {
      if (const auto progress = form().poll(); progress != RoundProgress::Waiting) {
        return progress == RoundProgress::Met;
      }
      const auto now = MpiClock::now();
      if (now >= deadline) return !form().give_up();
      if (now - start_ >= kYieldFor && look_during_long_wait(now)) return false;
      form().pause(now - start_, polls);
    }
  }

  /// Once the wait is long: a notice for an earlier round (which we completed: the race described
  /// in the guide) fails the call like one found at step 2, and so does one that comes when the
  /// round was met meanwhile; one for this round ends the wait (returns true: step 4). A Final
  /// means the roll call is over: the others gave up on us before we arrived. Also Ctrl-C, and the
  /// notices of members that gave up on another set.
  bool look_during_long_wait(MpiClock::time_point now) {
    early_ = test_gave_up(entry_, rounds_, control_);
    if (!early_.empty()) {
      const bool over = roll_call_is_over(early_, mine_.sequence);
      const bool met_meanwhile = !form().give_up();
      if (over || met_meanwhile) throw_others_gave_up(entry_, givers_of(entry_, early_, me_), seconds_, me_);
      return true;
    }
    interrupts_();  // Ctrl-C within ~50 ms; the round's destruction cancels its receives
    if (now - last_answer_ >= InterruptPoll::kEvery) answer_notices(now);
    return false;
  }

  /// A member that gave up on another set asks which set this instance waits in (waited_in.hpp).
  void answer_notices(MpiClock::time_point now) {
    last_answer_ = now;
    if (!waited_) waited_.emplace(entry_, control_);
    waited_->take();
    if constexpr (Form::kFailsOnOtherOperation) {
      if (const auto [other, what] = waited_->other_operation(); other >= 0) {
        throw_other_operation(entry_, *waited_, other, what, me_);
      }
    }
  }

  // 5. Everyone arrived. Were we the late one, whom the others gave up on before we arrived?
  //    (The late look, described in the guide.) Their notices were sent before we arrived, but MPI
  //    may still hold them behind the round's messages (measured with Open MPI after earlier
  //    rounds: step 2's single pass missed them about one time in three), so look again, with
  //    progress passes of our own -- but only when we can be late. A notice that comes later
  //    still is found by step 2 of our next timed round over the set.
  void look_if_late(MpiClock::time_point deadline) {
    if (TimedRounds::may_be_late(previous_start_, start_, form().shortest_timeout())) {
      look_for_late_notices(entry_, rounds_, control_, deadline, seconds_, me_);
    }
  }

  const std::optional<MpiClock::time_point> previous_start_;
  std::vector<Heard> early_;  ///< the roll call's messages that came while we still waited
  InterruptPoll interrupts_;
  std::optional<WaitedIn> waited_;  ///< made once this wait sleeps: answers notices (waited_in.hpp)
  MpiClock::time_point last_answer_;
};

}  // namespace popdist::detail
