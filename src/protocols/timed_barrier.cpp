// The timed barrier protocol. (Over all instances, the host barrier's timed forms take over: on one
// host its shared-memory wait, across hosts timed_hosts.cpp, whose failure path is this file's
// roll call; timed_failure.cpp holds what they share.) Each round (each has a per-set sequence number) is a
// recursive-doubling barrier over the positions of the sorted members (timed_rounds.hpp): at
// step s a member sends ARRIVED(hash, seq) to the member at its position XOR 2^s and waits for
// that member's, and sends step s+1 only once steps 0..s are in; a member beyond the largest
// power of two folds into one below it. After the last step every member has heard, directly or
// through others, of every member's arrival: at most ceil(log2 k) messages per member and
// O(log k) latency, like MPI_Barrier, where an all-to-all exchange sent k - 1 messages from
// every member. (The partners of the steps are distinct; MPI's non-overtaking order per source
// and tag keeps consecutive rounds apart; the payload's hash and sequence are checked.)
//
// Each member also keeps a GAVE_UP(set hash, seq) receive from any member posted for the set
// (from its first timed round on, and again after a notice that turns out to be another set's).
// A round:
//
//   1. it posts the ARRIVED receives of every step, then sends step 0 (non-blocking, from
//      buffers the set keeps);
//   2. it looks at the GAVE_UP receive (MPI_Test: one MPI progress pass, which also takes in
//      whatever has arrived): a notice there means that members gave up waiting for us (we are
//      the late one) or gave up on an earlier round that we completed (the race below), and the
//      call fails at once, naming them. Looked at after our step 0 is out, so that the pass
//      delays nobody;
//   3. it polls the one receive it needs next (the ARRIVED of the lowest step not in yet),
//      sending each next step as soon as the steps before it are in, until all steps are in,
//      the deadline, or -- looked at only once the wait has lasted kYieldFor -- a GAVE_UP;
//   4. on the deadline (or a GAVE_UP while steps are still missing) it fails: see "Naming the
//      missing" below;
//   5. once all steps are in, when this instance may have been the late one (the late look
//      below), it makes a few more MPI progress passes looking for a GAVE_UP, so that a late
//      arrival does not return as if everyone had met.
//
// Naming the missing. A barrier of point-to-point steps that stalls tells a member only which of its own
// partners is silent, not who is missing: the partner may itself be waiting for someone. So the
// failure path widens to a roll call (roll_call.hpp), paid only when something is wrong: a member
// whose deadline passes, or that receives a roll-call message while it still waits, runs it with
// the others for roll_call_length (half its timeout between 50 ms and 1 s, or levels + 7 windows
// of an eighth of the timeout, 20 to 125 ms, when that is longer: the call ends soon after its
// timeout). The roll call is the
// barrier's own recursive-doubling shape with bitmaps of the members known present: a member asks
// its partner block at each level and takes the first answer from it, asking the block's other
// members one window after another only when the partner is silent, so that it costs
// ceil(log2 k) + 2 messages per member when one member is missing (an all-to-all roll call cost
// k - 1), and more only when whole blocks are missing (up to a block's size for a member asking
// a mostly absent one; when that takes longer than levels + 5 windows, the members not done ask
// the ones still unknown to them directly, up to 2k messages per member). Every member that takes
// part names exactly the members that did not; a
// member still polling in the barrier takes part as the first message reaches it (the GAVE_UP
// receive is tested in long waits). Every roll-call message goes on the GAVE_UP tag, and every
// absent member is sent at least one (its nearest present member sends it the final list), so
// that a member that arrives after the others gave up finds it at step 2 and fails naming them,
// without taking part, so it is named missing by the others, as it should be. A member arriving
// while the roll call still runs takes part, unless what it finds is the final list.
//
// The late look (step 5). Member p started this round after completing the previous one, which
// needed our previous arrival, which came after our previous start; p gives up no sooner than
// its timeout after its start. So if we arrived within the shortest of the members' timeouts of
// our previous round's start, nobody can have given up on us before we arrived, and a
// synchronize called in a loop never pays for the look. Each ARRIVED carries the shortest timeout
// its sender has heard of in the round, so after the last step every member knows the shortest
// of all.
//
// The remaining race (inherent to any timeout; it is the two-generals problem): a member that
// arrives within microseconds of another's deadline can complete its round and look for GAVE_UP
// before that member has sent it, and so return normally while the other raised TimeoutError.
// The set is then abandoned on one side only; the survivor finds the GAVE_UP at its next timed
// synchronize over the set (an untimed synchronize does not look, to stay a plain barrier).
//
// Why it is shaped for speed (the target: a timed synchronize close to MPI_Barrier's cost,
// tests/bench/README.md): what made earlier versions slower was around the exchange: an
// MPI_Improbe for GAVE_UP in every poll iteration (each one a full MPI progress pass), an
// explicit yield per iteration, heap allocations per call, and then one MPI_Testsome over
// every request of the round per poll (SMPI charges each unsuccessful MPI_Test inside it, on
// every step of the critical path). So a poll tests the one receive that the
// next send waits for; the GAVE_UP receive stays posted (no probing) and is tested only in long
// waits, where a member can have given up; our sends are tested once at the end of the round
// (small sends complete at once); the buffers and requests live in the set's TimedRounds; and
// the loop spins for its first microseconds (a barrier between running processes completes in
// that time), yielding only after that so that an oversubscribed machine still runs the
// members we wait for, and sleeping between polls once the wait is long (a late member, a long
// timeout) so that it does not burn a core. Measured in the simulation: a step costs one
// message latency and at most one MPI_Test more (tests/bench/README.md, "Simulated clusters").
//
// Nothing here is a collective, so the job can still finalize after a timeout: unmatched
// messages are left in MPI's queues, send requests are released at finalize, and finalize
// cancels the GAVE_UP receives (cancel_timed_receives).
#include "protocols/timed_barrier.hpp"

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
#include "protocols/host_barrier.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/roll_call.hpp"
#include "protocols/synchronize_guard.hpp"
#include "protocols/timed_failure.hpp"
#include "protocols/timed_hosts.hpp"
#include "protocols/timed_rounds.hpp"
#include "protocols/waited_in.hpp"
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
  auto& rounds = rounds_of(entry, me, control);

  // A send of the previous round still in flight reads the old buffers: write new ones.
  if (rounds.outgoing.use_count() > 1) rounds.outgoing = std::make_shared<std::vector<Round>>(rounds.steps);
  auto& outgoing = *rounds.outgoing;
  const Round mine{entry.hash, entry.timed_sequence.fetch_add(1) + 1, seconds};
  const auto previous_start = rounds.begin_round(start);
  const auto steps = rounds.steps;
  // A step without a receive (recursive doubling's fold: timed_rounds.hpp) is in from the start.
  for (std::size_t step = 0; step < steps; ++step) rounds.received[step] = rounds.receive_from[step] == kNoPartner;
  std::size_t remaining = rounds.receives;
  std::size_t next_send = 0;               // the next step to send
  double shortest_timeout = seconds;       // of the members heard of, directly or not
  const RoundCleanup cleanup(rounds);

  const auto post_receive = [&](std::size_t step) {
    MpiLock lock;
    check_mpi(MPI_Irecv(&rounds.incoming[step], sizeof(Round), MPI_BYTE, rounds.receive_from[step],
                        entry.arrived_tag, control, &rounds.requests[step]),
              "MPI_Irecv");
  };
  // Sends every step whose predecessors are all in (step 0 at once).
  const auto send_ready_steps = [&] {
    while (next_send < steps && (next_send == 0 || rounds.received[next_send - 1] != 0)) {
      if (rounds.send_to[next_send] == kNoPartner) {  // a step that only receives
        ++next_send;
        continue;
      }
      outgoing[next_send] = Round{mine.hash, mine.sequence, shortest_timeout};
      MpiLock lock;
      check_mpi(MPI_Isend(&outgoing[next_send], sizeof(Round), MPI_BYTE, rounds.send_to[next_send], entry.arrived_tag,
                          control, &rounds.requests[rounds.send_index(next_send)]),
                "MPI_Isend");
      ++next_send;
    }
  };
  // A received ARRIVED: ours (count it), another set's whose tag collides (listen again), or
  // a different round of ours, which means the members called synchronize a different number
  // of times on this set.
  const auto accept = [&](std::size_t step) {
    const auto& incoming = rounds.incoming[step];
    if (incoming.hash != mine.hash) {
      post_receive(step);
      return;
    }
    if (incoming.sequence != mine.sequence) {
      abandon(entry, "the members were out of step");
      throw Error(fmt::format("synchronize over {} ('{}'): instance {} is at its timed synchronize #{} over this set "
                              "but this instance (instance {}) is at #{}; every member must make the same calls",
                              format_set(entry.members), entry.name, rounds.receive_from[step], incoming.sequence, me,
                              mine.sequence));
    }
    shortest_timeout = std::min(shortest_timeout, incoming.timeout);
    rounds.received[step] = 1;
    --remaining;
  };

  // 1. Listen to every step, then send step 0.
  for (std::size_t step = 0; step < steps; ++step) {
    if (rounds.receive_from[step] != kNoPartner) post_receive(step);
  }
  send_ready_steps();

  // 2. Had a member given up on us already (we are the late one, or it gave up on an earlier
  //    round that we completed: the race described above)? Looked at after step 0 is out, so
  //    that the MPI progress pass this takes delays nobody; that pass also takes in whatever
  //    has arrived, so a late instance sees the notices sent to it.
  if (const auto heard = test_gave_up(entry, rounds, control); !heard.empty()) {
    throw_others_gave_up(entry, givers_of(entry, heard, me), seconds, me);
  }

  // 3. Poll the one receive this member needs next: the ARRIVED of the lowest step not in yet
  //    (later steps may be in already; testing a completed receive costs nothing and does not
  //    wait). The GAVE_UP receive is looked at only once the wait is long (see the top: "Why it
  //    is shaped for speed"), our sends at the end of the round (RoundCleanup).
  std::vector<Heard> early;  // the roll call's messages that came while we still waited
  InterruptPoll interrupts;
  std::optional<WaitedIn> waited;  // made once this wait sleeps: answers notices (waited_in.hpp)
  auto last_answer = start;
  std::size_t lowest = 0;  // every step below it is in
  while (remaining > 0) {
    while (lowest < steps) {
      if (rounds.received[lowest] == 0) {
        int flag = 0;
        {
          MpiLock lock;
          check_mpi(MPI_Test(&rounds.requests[lowest], &flag, MPI_STATUS_IGNORE), "MPI_Test");
        }
        if (flag == 0) break;
        accept(lowest);  // another set's message: posted again, and tested again at once
        if (rounds.received[lowest] == 0) continue;
      }
      ++lowest;
    }
    send_ready_steps();
    if (remaining == 0) break;
    const auto now = Clock::now();
    if (now >= deadline) break;
    if (now - start >= kYieldFor) {
      // A notice for an earlier round (which we completed: the race described at the top) fails
      // the call like one found at step 2; one for this round ends the wait (step 4).
      // A Final means the roll call is over: the others gave up on us before we arrived.
      early = test_gave_up(entry, rounds, control);
      if (roll_call_is_over(early, mine.sequence)) throw_others_gave_up(entry, givers_of(entry, early, me), seconds, me);
      if (!early.empty()) break;
      interrupts();  // Ctrl-C within ~50 ms; the cleanup cancels this round's receives
      if (now - last_answer >= InterruptPoll::kEvery) {
        // A member that gave up on another set asks which set this instance waits in.
        last_answer = now;
        if (!waited) waited.emplace(entry, control);
        waited->take();
        if (const auto [other, what] = waited->other_operation(); other >= 0) throw_other_operation(entry, *waited, other, what, me);
      }
    }
    pause_between_polls(now - start, kSpinFor, kYieldFor, kSleepBetweenPolls);
  }

  // 4. Timed out, or another member gave up while steps were still missing here.
  if (remaining > 0) roll_call_and_fail(entry, rounds, mine, std::move(early), seconds, control);
  if (!early.empty()) throw_others_gave_up(entry, givers_of(entry, early, me), seconds, me);

  // 5. Everyone arrived. Were we the late one, whom the others gave up on before we arrived?
  //    (The late look, described at the top.) Their notices were sent before we arrived, but MPI
  //    may still hold them behind the ARRIVED messages (measured with Open MPI after earlier
  //    rounds: step 2's single pass missed them about one time in three), so look again, with
  //    progress passes of our own -- but only when we can be late. A notice that comes later
  //    still is found by step 2 of our next timed round over the set.
  if (TimedRounds::may_be_late(previous_start, start, shortest_timeout)) {
    look_for_late_notices(entry, rounds, control, deadline, seconds, me);
  }
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
