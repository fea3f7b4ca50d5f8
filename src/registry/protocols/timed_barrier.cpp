// The timed barrier protocol. Each round (each has a per-set sequence number) is a
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
#include "registry/protocols/timed_barrier.hpp"

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
#include "registry/instance_sets.hpp"
#include "registry/protocols/host_barrier.hpp"
#include "registry/protocols/roll_call.hpp"
#include "registry/protocols/timed_rounds.hpp"
#include "registry/protocols/waited_in.hpp"
#include "registry/registry.hpp"
#include "registry/synchronize_guard.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {
namespace {

using Clock = MpiClock;  // MPI's clock: simulated time under SMPI (mpi/clock.hpp)

/// Polling back-off (see the top of this file): spin on MPI_Test for this long, then yield
/// between polls until kYieldFor, then sleep kSleepBetweenPolls between polls.
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::milliseconds(10);
constexpr auto kSleepBetweenPolls = std::chrono::microseconds(50);
/// How many MPI progress passes (at most kLateNoticeGrace) the late look makes for a GAVE_UP
/// when this instance may be the late one: a notice sent before we arrived is in this process's
/// queues already and needs passes, not time (measured: one that step 2's pass missed was always
/// found by the next pass). Few, since every first timed round over a set pays for them.
constexpr int kLateNoticePasses = late_look_passes(8);  // 1 under SMPI (mpi/late_look.hpp)
constexpr auto kLateNoticeGrace = std::chrono::milliseconds(1);
/// How often the roll call polls at first (less often as it goes on).
constexpr auto kRollCallPoll = std::chrono::microseconds(200);
/// How long a timed host-barrier failure listens for the missing members' sets (waited_in.hpp).
constexpr double kHostAnswerGrace = 0.25;  ///< seconds

/// A message of the GAVE_UP tag, read: who sent it, its head, the members it knows present.
struct Heard {
  int source = 0;
  Notice notice;
  RollCall::Bitmap present;
};

/// `bytes` as this set's GAVE_UP message, or nothing (too short, or another set's whose tag
/// collides with ours: its hash differs).
std::optional<Heard> read_notice(const Entry& entry, const char* bytes, std::size_t size, int source) {
  Heard heard;
  if (size < sizeof heard.notice) return std::nullopt;
  std::memcpy(&heard.notice, bytes, sizeof heard.notice);
  if (heard.notice.hash != entry.hash) return std::nullopt;
  heard.source = source;
  heard.present.assign(bytes + sizeof heard.notice, bytes + size);
  return heard;
}

void abandon(Entry& entry, std::string reason) {
  if (!entry.abandoned.load(std::memory_order_acquire)) {
    entry.abandoned_reason = std::move(reason);
    entry.abandoned.store(true, std::memory_order_release);
    bump_registry_generation();
  }
}

/// The GAVE_UP receive from any member that stays posted for the set (re-posted after it takes
/// a notice that turns out to be another set's).
void post_gave_up_receive(const Entry& entry, TimedRounds& rounds, MPI_Comm control) {
  MpiLock lock;
  check_mpi(MPI_Irecv(rounds.gave_up_notice.data(), static_cast<int>(rounds.gave_up_notice.size()), MPI_BYTE,
                      MPI_ANY_SOURCE, entry.gave_up_tag, control, &rounds.gave_up_request()),
            "MPI_Irecv");
}

/// The set's TimedRounds, made (and its GAVE_UP receive posted) on its first timed round.
TimedRounds& rounds_of(Entry& entry, int me, MPI_Comm control) {
  if (!entry.timed) {
    entry.timed =
        std::make_unique<TimedRounds>(entry.members, me, static_cast<std::size_t>(runtime_state().size));
    post_gave_up_receive(entry, *entry.timed, control);
  }
  return *entry.timed;
}

/// Receives the GAVE_UP messages already queued for this set that no posted receive took (the
/// failure path only, so probing is fine here), adding them to `heard`.
void drain_gave_up(const Entry& entry, MPI_Comm control, std::vector<Heard>& heard) {
  for (;;) {
    MPI_Status status;
    std::vector<char> bytes;
    if (!take_message(entry.gave_up_tag, control, bytes, status)) break;
    // Another set's message whose tag collides with ours is dropped (its hash differs).
    if (auto one = read_notice(entry, bytes.data(), bytes.size(), status.MPI_SOURCE)) heard.push_back(std::move(*one));
  }
}

/// The posted GAVE_UP receive's message after it completed with `status`, or nothing when it
/// was another set's.
std::optional<Heard> posted_notice(const Entry& entry, TimedRounds& rounds, const MPI_Status& status) {
  int size = 0;
  MPI_Get_count(&status, MPI_BYTE, &size);
  return read_notice(entry, rounds.gave_up_notice.data(), static_cast<std::size_t>(std::max(size, 0)),
                     status.MPI_SOURCE);
}

/// After the GAVE_UP receive completed with `status`: the messages of members that gave up (on
/// this round or an earlier one: either way the set is abandoned on their side); the receive is
/// then not posted again, as the set is about to be abandoned here too. Empty for another set's
/// message whose tag collides with ours: the receive is posted again.
std::vector<Heard> take_gave_up(const Entry& entry, TimedRounds& rounds, const MPI_Status& status, MPI_Comm control) {
  auto first = posted_notice(entry, rounds, status);
  if (!first) {
    post_gave_up_receive(entry, rounds, control);
    return {};
  }
  std::vector<Heard> heard{std::move(*first)};
  drain_gave_up(entry, control, heard);
  return heard;
}

/// Whether a GAVE_UP has come (MPI_Test: one progress pass when it has not): the messages, or
/// empty.
std::vector<Heard> test_gave_up(const Entry& entry, TimedRounds& rounds, MPI_Comm control) {
  if (rounds.gave_up_request() == MPI_REQUEST_NULL) return {};
  int flag = 0;
  MPI_Status status;
  {
    MpiLock lock;
    check_mpi(MPI_Test(&rounds.gave_up_request(), &flag, &status), "MPI_Test");
  }
  return flag != 0 ? take_gave_up(entry, rounds, status, control) : std::vector<Heard>();
}

/// The members that gave up, from their messages: the senders, and the members their bitmaps
/// name present (all of them in the roll call too), but this instance, sorted.
std::vector<int> givers_of(const Entry& entry, const std::vector<Heard>& heard, int me) {
  std::set<int> givers;
  for (const auto& one : heard) {
    givers.insert(one.source);
    for (std::size_t i = 0; i < entry.members.size(); ++i) {
      if (RollCall::bit(one.present, i)) givers.insert(entry.members[i]);
    }
  }
  givers.erase(me);
  return {givers.begin(), givers.end()};
}

/// The senders of `heard`, sorted.
std::vector<int> senders_of(const std::vector<Heard>& heard) {
  std::set<int> senders;
  for (const auto& one : heard) senders.insert(one.source);
  return {senders.begin(), senders.end()};
}

/// On every way out of a round (exceptions included): cancels the ARRIVED receives still
/// posted, so that none of them takes the next round's message, and hands the sends still in
/// flight (to a member that never came, or simply not yet done) to PendingSends, with a
/// reference to their buffers.
class RoundCleanup {
 public:
  explicit RoundCleanup(TimedRounds& rounds) : rounds_(rounds) {}
  RoundCleanup(const RoundCleanup&) = delete;
  RoundCleanup& operator=(const RoundCleanup&) = delete;
  ~RoundCleanup() {
    for (std::size_t step = 0; step < rounds_.steps; ++step) {
      auto& receive = rounds_.requests[step];
      if (receive != MPI_REQUEST_NULL) {
        MpiLock lock;
        MPI_Cancel(&receive);
        MPI_Wait(&receive, MPI_STATUS_IGNORE);
        receive = MPI_REQUEST_NULL;
      }
      auto& send = rounds_.requests[rounds_.send_index(step)];
      if (send != MPI_REQUEST_NULL) {
        int flag = 0;
        {
          MpiLock lock;
          MPI_Test(&send, &flag, MPI_STATUS_IGNORE);  // a small send has completed: nothing to keep
        }
        if (flag != 0) continue;
        pending_sends().adopt(send, rounds_.outgoing);
        send = MPI_REQUEST_NULL;
      }
    }
  }

 private:
  TimedRounds& rounds_;
};

[[noreturn]] void throw_others_gave_up(Entry& entry, const std::vector<int>& givers, double seconds, int me) {
  const auto text = fmt::format(
      "synchronize over {} ('{}'): instance{} {} gave up waiting for this instance (instance {}) before it arrived "
      "(this call's timeout: {} s); the set is now abandoned",
      format_set(entry.members), entry.name, givers.size() == 1 ? "" : "s", fmt::join(givers, ", "), me, seconds);
  abandon(entry, fmt::format("instances {} gave up", fmt::join(givers, ", ")));
  throw TimeoutError(text, {me});
}

[[noreturn]] void throw_missing(Entry& entry, const std::vector<int>& givers, const std::vector<int>& missing,
                                double seconds, const std::string& explanation = {});

/// After telling `missing` which set this instance waited in (waited_in.hpp): takes their answers,
/// and answers the notices of members that miss this instance, for `seconds`. Not less once
/// `missing` have all answered: when members name a cycle of sets (0 over {0, 1}, 1 over {1, 2},
/// 2 over {0, 2}), the member that misses this one tells it at the end of its own roll call, about
/// when this one's missing answer, and it learns this one's set only from the answer.
void listen_for_sets(WaitedIn& waited, const std::vector<int>& missing, double seconds) {
  if (missing.empty()) return;  // every member of this set arrived (a timeout ran out late): nothing to ask
  // The roll call's wait (pause_between_polls, mpi/clock.hpp): the window is on MPI's clock, so
  // the pause must be in that clock too. Under SMPI a sleep of the OS thread stops every
  // simulated rank in real time while this rank's simulated clock moves only by each poll's cost,
  // so the window would last as many polls as it holds microseconds.
  const auto start = Clock::now();
  const auto until = start + seconds_on_mpi_clock(seconds);
  while (Clock::now() < until) {
    waited.take();
    pause_between_polls(Clock::now() - start, {}, {}, kRollCallPoll);
  }
}

/// The failure path (step 4): the roll call (roll_call.hpp) with the members still in the round,
/// for roll_call_length, then TimeoutError naming the members that did not take part. `heard`: the
/// messages that came while this instance still waited (it joins the roll call they started).
[[noreturn]] void roll_call_and_fail(Entry& entry, TimedRounds& rounds, const Round& mine, std::vector<Heard> heard,
                                     double seconds, MPI_Comm control) {
  const auto& members = entry.members;
  const auto me = runtime_state().rank;
  const auto givers = senders_of(heard);
  RollCall call(members.size(), position_of(members, me), roll_call_window(seconds),
                [&](std::size_t to, RollCall::Kind kind, int level, const RollCall::Bitmap& present) {
                  const Notice notice{mine.hash, mine.sequence, seconds, static_cast<std::int32_t>(kind), level};
                  std::vector<char> bytes(sizeof notice + present.size());
                  std::memcpy(bytes.data(), &notice, sizeof notice);
                  std::copy(present.begin(), present.end(), bytes.begin() + sizeof notice);
                  pending_sends().send(std::move(bytes), members[to], entry.gave_up_tag, control);
                });
  // Which set each missing member waited in (waited_in.hpp): asked of the missing only, once the
  // roll call has named them, so that the failure path sends one more message per missing member
  // rather than one more per member. Notices from members that gave up on another set are
  // answered during the roll call too.
  WaitedIn waited(entry, control);

  const auto start = Clock::now();
  const auto elapsed = [&start] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const auto deliver = [&](std::vector<Heard>& messages) {
    for (const auto& one : messages) {
      // A message of an earlier round was answered by that round's failure; only this round's count.
      const auto from = position_of(members, one.source);  // the member count for a non-member
      if (one.notice.sequence != mine.sequence || from >= members.size()) continue;
      call.receive(from, static_cast<RollCall::Kind>(one.notice.kind), one.notice.level, one.present, elapsed());
    }
    messages.clear();
  };
  call.start(0);
  deliver(heard);
  const auto settle_at = start + seconds_on_mpi_clock(roll_call_settle(seconds, members.size()));
  const auto until = start + seconds_on_mpi_clock(roll_call_length(seconds, members.size()));
  while (Clock::now() < until) {
    if (!call.done() && Clock::now() >= settle_at) call.settle(elapsed());  // once: it ends in a window
    // The posted receive takes the first message that comes; the others wait in MPI's queue for
    // the probe. Once the posted one has completed, it is not posted again.
    if (rounds.gave_up_request() != MPI_REQUEST_NULL) {
      int flag = 0;
      MPI_Status status;
      {
        MpiLock lock;
        check_mpi(MPI_Test(&rounds.gave_up_request(), &flag, &status), "MPI_Test");
      }
      if (flag != 0) {
        if (auto one = posted_notice(entry, rounds, status)) heard.push_back(std::move(*one));
      }
    }
    drain_gave_up(entry, control, heard);
    deliver(heard);
    call.poll(elapsed());
    waited.take();
    // Every kRollCallPoll at first, less often as the roll call goes on.
    pause_between_polls(Clock::now() - start, {}, {}, kRollCallPoll);
  }
  std::vector<int> missing;
  for (const auto position : call.missing()) missing.push_back(members[position]);
  // A missing member that waits in another timed synchronize answers within its polling interval
  // (InterruptPoll::kEvery); one in an untimed wait, or dead, never does: a quarter second at most.
  waited.tell(missing);
  listen_for_sets(waited, missing, std::min(roll_call_grace(seconds), kHostAnswerGrace));
  throw_missing(entry, givers, missing, seconds, waited.explain(missing));
}

/// Abandons the set and throws TimeoutError naming `missing`, the members that did not arrive;
/// `givers`: the members that gave up first (empty when this instance's own deadline ended it).
[[noreturn]] void throw_missing(Entry& entry, const std::vector<int>& givers, const std::vector<int>& missing,
                                double seconds, const std::string& explanation) {
  const auto how = givers.empty()
                       ? fmt::format("timed out after {} s", seconds)
                       : fmt::format("failed (instance{} {} gave up waiting first; this call's timeout: {} s)",
                                     givers.size() == 1 ? "" : "s", fmt::join(givers, ", "), seconds);
  const auto what = missing.empty()
                        ? std::string("every member arrived, but not before a member's timeout ran out")
                        : fmt::format("instance{} {} did not arrive{}", missing.size() == 1 ? "" : "s",
                                      fmt::join(missing, ", "), explanation);
  const auto text = fmt::format("synchronize over {} ('{}') {}: {}; the set is now abandoned",
                                format_set(entry.members), entry.name, how, what);
  abandon(entry, missing.empty() ? fmt::format("a member's timeout ran out")
                                 : fmt::format("instances {} did not arrive within {} s", fmt::join(missing, ", "),
                                               seconds));
  throw TimeoutError(text, missing);
}

}  // namespace

namespace {

/// A timed synchronize over all instances of a job on one host: the host barrier's timed wait
/// in shared memory, no message at all; it names the missing from their slots.
void timed_host_barrier(Entry& entry, HostBarrier& host, double seconds, Clock::time_point deadline, int me,
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

void timed_barrier(Entry& entry, double seconds) {
  const auto& runtime = runtime_state();
  const int me = runtime.rank;
  const MPI_Comm control = runtime.control;
  if (entry.abandoned.load(std::memory_order_acquire)) throw_abandoned(entry, "synchronize");
  if (entry.members.size() < 2) return;  // the caller checked membership: nobody else to wait for
  // Bounded to ~30 years so that a huge timeout cannot overflow the clock arithmetic.
  const auto start = Clock::now();
  const auto deadline = start + seconds_on_mpi_clock(seconds);
  if (auto* host = entry.host_barrier; host != nullptr && !host->spans_hosts()) {
    timed_host_barrier(entry, *host, seconds, deadline, me, control);
    return;
  }

  const TimedTurn in_turn(entry);
  auto& rounds = rounds_of(entry, me, control);

  // A send of the previous round still in flight reads the old buffers: write new ones.
  if (rounds.outgoing.use_count() > 1) rounds.outgoing = std::make_shared<std::vector<Round>>(rounds.steps);
  auto& outgoing = *rounds.outgoing;
  const Round mine{entry.hash, entry.timed_sequence.fetch_add(1) + 1, seconds};
  const bool had_previous_round = rounds.has_previous_round;
  const auto previous_start = rounds.previous_start;
  rounds.previous_start = start;
  rounds.has_previous_round = true;
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
      const bool over = std::any_of(early.begin(), early.end(), [&mine](const Heard& one) {
        return one.notice.sequence < mine.sequence || one.notice.kind == static_cast<std::int32_t>(RollCall::Kind::Final);
      });
      if (over) throw_others_gave_up(entry, givers_of(entry, early, me), seconds, me);
      if (!early.empty()) break;
      interrupts();  // Ctrl-C within ~50 ms; the cleanup cancels this round's receives
      if (now - last_answer >= InterruptPoll::kEvery) {
        // A member that gave up on another set asks which set this instance waits in.
        last_answer = now;
        if (!waited) waited.emplace(entry, control);
        waited->take();
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
  const bool may_be_late =
      !had_previous_round || start - previous_start > std::chrono::duration<double>(shortest_timeout);
  if (may_be_late) {
    const auto until = std::min(deadline, Clock::now() + kLateNoticeGrace);
    for (int pass = 0; pass < kLateNoticePasses && (pass == 0 || Clock::now() < until); ++pass) {
      if (const auto heard = test_gave_up(entry, rounds, control); !heard.empty()) {
        throw_others_gave_up(entry, givers_of(entry, heard, me), seconds, me);
      }
    }
  }
}

void cancel_timed_receives(Entry& entry, bool mpi_usable) noexcept {
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
