// The timed barrier: synchronize() with a timeout over a set's members (timed_barrier.hpp). Each
// round is a recursive-doubling exchange of ARRIVED messages over the members' positions
// (timed_rounds.hpp), with a GAVE_UP receive kept posted per set; a member whose deadline passes
// names the missing in a roll call (roll_call.hpp, timed_failure.cpp). Over all instances the host
// barrier's timed forms take over (on one host its shared-memory wait, across hosts
// timed_hosts.cpp). A round's steps 1 to 5 are FlatRound's functions, in order. Why it is shaped
// so, the late look, the race no timeout escapes, and what it costs: docs/guide/protocols.md,
// "The timed barrier". Nothing here is a collective, so the job can still finalize after a timeout.
#include "protocols/timed/timed_barrier.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mpi/clock.hpp"
#include "mpi/interrupts.hpp"
#include "mpi/late_look.hpp"
#include "mpi/matched_receive.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/pending_sends.hpp"
#include "popdist/error.hpp"
#include "protocols/host_barrier/host_barrier.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/synchronize_guard.hpp"
#include "protocols/timed/roll_call.hpp"
#include "protocols/timed/round_exchange.hpp"
#include "protocols/timed/timed_failure.hpp"
#include "protocols/timed/timed_hosts.hpp"
#include "protocols/timed/timed_rounds.hpp"
#include "protocols/timed/waited_in.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {
namespace {

using Clock = MpiClock;  // MPI's clock: simulated time under SMPI (mpi/clock.hpp)

/// A member that waits over the same members in another popdist operation (synchronize against
/// one of popdist's collectives: waited_in.hpp) can never meet this one: fail now, naming both.
[[noreturn]] void throw_other_operation(ProtocolSet& entry, WaitedIn& waited, int other, const std::string& what, int me) {
  // Every member learns what this one was in, also those whose notices had not come yet: they
  // find it queued when they fail in turn (a failure path: one short message per member).
  std::vector<int> others;
  for (const auto member : entry.members) {
    if (member != me) others.push_back(member);
  }
  waited.tell(others);
  abandon(entry, fmt::format("instance {} was in {}", other, what));
  throw UsageError(fmt::format("instance {} is in {} while this instance is in {}; every instance must make the same "
                               "popdist calls in the same order",
                               other, what, waited.mine()));
}

/// A timed synchronize over all instances of a job on one host: the host barrier's timed wait
/// in shared memory, no message at all; it names the missing from their slots.
void timed_host_barrier(ProtocolSet& entry, HostBarrier& host, double seconds, Clock::time_point deadline, int me,
                        MPI_Comm control) {
  const TimedTurn in_turn(entry);
  // The host barrier waits in shared memory (a futex), on the machine's own monotonic clock.
  auto outcome = host.wait_until(std::chrono::steady_clock::now() +
                                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline - Clock::now()));
  if (outcome.kind == HostBarrier::TimedOutcome::Met) return;
  if (outcome.kind == HostBarrier::TimedOutcome::Late) throw_others_gave_up(entry, {outcome.gave_up_by}, seconds, me);
  // Which set the missing waited in (waited_in.hpp), for at most a quarter second (no roll call
  // here: a missing member that died would cost the whole grace).
  WaitedIn waited(entry, control);
  waited.tell(outcome.missing);
  listen_for_sets(waited, outcome.missing, std::min(roll_call_grace(seconds), kHostAnswerGrace));
  const auto givers = outcome.kind == HostBarrier::TimedOutcome::OtherGaveUp ? std::vector<int>{outcome.gave_up_by}
                                                                              : std::vector<int>{};
  throw_missing(entry, givers, outcome.missing, seconds, waited.explain(outcome.missing));
}

/// One round of the timed barrier over the set's members, steps 1 to 5 of docs/guide/protocols.md, "The
/// timed barrier". Made with the set's turn held; its destruction cancels the receives still posted and
/// hands the sends in flight to PendingSends (RoundCleanup).
class FlatRound {
 public:
  FlatRound(ProtocolSet& entry, double seconds, Clock::time_point start, int me, MPI_Comm control)
      : entry_(entry),
        rounds_(rounds_of(entry, me, control)),
        control_(control),
        me_(me),
        seconds_(seconds),
        start_(start),
        mine_(begin(entry, seconds)),
        previous_start_(rounds_.begin_round(start)),
        shortest_timeout_(seconds),
        last_answer_(start),
        exchange_(rounds_, control, entry.arrived_tag),
        cleanup_(rounds_) {}

  void run(Clock::time_point deadline) {
    listen_and_send_first();
    fail_if_given_up_already();
    wait_for_steps(deadline);
    fail_if_missing();
    look_if_late(deadline);
  }

 private:
  /// This round's ARRIVED payload, as first sent.
  static Round begin(ProtocolSet& entry, double seconds) {
    return Round{entry.hash, entry.timed_sequence.fetch_add(1) + 1, seconds};
  }

  /// Sends every step whose predecessors are all in, with the shortest timeout heard so far.
  void send_ready_steps() { exchange_.send_ready(Round{mine_.hash, mine_.sequence, shortest_timeout_}); }

  /// A received ARRIVED: ours (count it), another set's whose tag collides (listen again), or
  /// a different round of ours, which means the members called synchronize a different number
  /// of times on this set.
  void accept(std::size_t step) {
    const auto& incoming = rounds_.incoming[step];
    if (incoming.hash != mine_.hash) {
      exchange_.post_receive(step);
      return;
    }
    if (incoming.sequence != mine_.sequence) {
      abandon(entry_, "the members were out of step");
      throw Error(fmt::format("synchronize over {} ('{}'): instance {} is at its timed synchronize #{} over this set "
                              "but this instance (instance {}) is at #{}; every member must make the same calls",
                              format_set(entry_.members), entry_.name, rounds_.receive_from[step], incoming.sequence,
                              me_, mine_.sequence));
    }
    shortest_timeout_ = std::min(shortest_timeout_, incoming.timeout);
    exchange_.count_in(step);
  }

  // 1. Listen to every step, then send step 0.
  void listen_and_send_first() {
    exchange_.listen();
    send_ready_steps();
  }

  // 2. Had a member given up on us already (we are the late one, or it gave up on an earlier
  //    round that we completed: the race of the guide)? Looked at after step 0 is out, so
  //    that the MPI progress pass this takes delays nobody; that pass also takes in whatever
  //    has arrived, so a late instance sees the notices sent to it.
  void fail_if_given_up_already() {
    if (const auto heard = test_gave_up(entry_, rounds_, control_); !heard.empty()) {
      throw_others_gave_up(entry_, givers_of(entry_, heard, me_), seconds_, me_);
    }
  }

  /// Takes the ARRIVED of the lowest step not in yet, and of the steps after it already in.
  void take_arrivals() {
    exchange_.take_arrivals([this](std::size_t step) { accept(step); });
  }

  /// Once the wait is long: a notice for an earlier round (which we completed: the race
  /// described in the guide) fails the call like one found at step 2; one for this round ends the
  /// wait (returns true: step 4). A Final means the roll call is over: the others gave up on us
  /// before we arrived. Also Ctrl-C, and the notices of members that gave up on another set.
  bool look_during_long_wait(Clock::time_point now) {
    early_ = test_gave_up(entry_, rounds_, control_);
    if (roll_call_is_over(early_, mine_.sequence)) {
      throw_others_gave_up(entry_, givers_of(entry_, early_, me_), seconds_, me_);
    }
    if (!early_.empty()) return true;
    interrupts_();  // Ctrl-C within ~50 ms; the cleanup cancels this round's receives
    if (now - last_answer_ >= InterruptPoll::kEvery) {
      // A member that gave up on another set asks which set this instance waits in.
      last_answer_ = now;
      if (!waited_) waited_.emplace(entry_, control_);
      waited_->take();
      if (const auto [other, what] = waited_->other_operation(); other >= 0) {
        throw_other_operation(entry_, *waited_, other, what, me_);
      }
    }
    return false;
  }

  // 3. Poll the one receive this member needs next: the ARRIVED of the lowest step not in yet.
  //    The GAVE_UP receive is looked at only once the wait is long (the guide: "Why it is
  //    shaped for speed"), our sends at the end of the round (RoundCleanup).
  void wait_for_steps(Clock::time_point deadline) {
    while (exchange_.remaining() > 0) {
      take_arrivals();
      send_ready_steps();
      if (exchange_.remaining() == 0) break;
      const auto now = Clock::now();
      if (now >= deadline) break;
      if (now - start_ >= kYieldFor && look_during_long_wait(now)) break;
      pause_between_polls(now - start_, kSpinFor, kYieldFor, kSleepBetweenPolls);
    }
  }

  // 4. Timed out, or another member gave up while steps were still missing here.
  void fail_if_missing() {
    if (exchange_.remaining() > 0) roll_call_and_fail(entry_, rounds_, mine_, std::move(early_), seconds_, control_);
    if (!early_.empty()) throw_others_gave_up(entry_, givers_of(entry_, early_, me_), seconds_, me_);
  }

  // 5. Everyone arrived. Were we the late one, whom the others gave up on before we arrived?
  //    (The late look, described in the guide.) Their notices were sent before we arrived, but MPI
  //    may still hold them behind the ARRIVED messages (measured with Open MPI after earlier
  //    rounds: step 2's single pass missed them about one time in three), so look again, with
  //    progress passes of our own -- but only when we can be late. A notice that comes later
  //    still is found by step 2 of our next timed round over the set.
  void look_if_late(Clock::time_point deadline) {
    if (TimedRounds::may_be_late(previous_start_, start_, shortest_timeout_)) {
      look_for_late_notices(entry_, rounds_, control_, deadline, seconds_, me_);
    }
  }

  ProtocolSet& entry_;
  TimedRounds& rounds_;
  const MPI_Comm control_;
  const int me_;
  const double seconds_;
  const Clock::time_point start_;
  const Round mine_;
  const std::optional<Clock::time_point> previous_start_;
  double shortest_timeout_;     ///< of the members heard of, directly or not
  std::vector<Heard> early_;    ///< the roll call's messages that came while we still waited
  InterruptPoll interrupts_;
  std::optional<WaitedIn> waited_;  ///< made once this wait sleeps: answers notices (waited_in.hpp)
  Clock::time_point last_answer_;
  RoundExchange exchange_;
  RoundCleanup cleanup_;  ///< last: destroyed first
};

}  // namespace

void timed_barrier(ProtocolSet& entry, double seconds) {
  const auto& runtime = runtime_state();
  const int me = runtime.rank;
  const MPI_Comm control = runtime.control;
  if (entry.abandoned.load(std::memory_order_acquire)) throw_abandoned(entry, "synchronize");
  if (entry.members.size() < 2) return;  // the caller checked membership: nobody else to wait for
  // Bounded to ~30 years so that a huge timeout cannot overflow the clock arithmetic.
  const auto start = Clock::now();
  const auto deadline = start + seconds_on_mpi_clock(seconds);
  if (auto* host = entry.host_barrier; host != nullptr) {
    if (!host->spans_hosts()) {
      timed_host_barrier(entry, *host, seconds, deadline, me, control);
      return;
    }
    if (host->uses_window()) {
      timed_across_hosts(entry, *host, seconds, start, deadline, me, control);
      return;
    }
  }
  const TimedTurn in_turn(entry);
  FlatRound(entry, seconds, start, me, control).run(deadline);
}

void cancel_timed_receives(ProtocolSet& entry, bool mpi_usable) noexcept {
  if (!entry.timed) return;
  auto& request = entry.timed->gave_up_request();
  if (request != MPI_REQUEST_NULL && mpi_usable) {
    MpiLock lock;
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  request = MPI_REQUEST_NULL;
}

}  // namespace popdist::detail
