// The timed barrier protocol, per round (each round has a per-set sequence number). Each member
// keeps a GAVE_UP(set hash, seq) receive from any member posted for the set (from its first
// timed round on, and again after a notice that turns out to be another set's); then:
//
//   1. it posts an Irecv for an ARRIVED(hash, seq) from every other member, then sends its own
//      ARRIVED to every other member (non-blocking, from a buffer the set keeps);
//   2. it looks at the GAVE_UP receive (MPI_Test: one MPI progress pass, which also takes in
//      whatever has arrived): a notice there means that members gave up waiting for us (we are
//      the late one) or gave up on an earlier round that we completed (the race below), and the
//      call fails at once, naming them. Looked at after our sends are out, so that the pass
//      delays nobody;
//   3. it polls one MPI_Testsome over the ARRIVED receives, the GAVE_UP receive and its own
//      sends, until all ARRIVED messages are in, a GAVE_UP comes, or the deadline;
//   4. on the deadline (or a GAVE_UP while members are still missing) it cancels the receives
//      still outstanding (a receive that matched during the cancel counts as an arrival), sends
//      GAVE_UP(hash, seq) to every other member, marks the set abandoned and throws TimeoutError
//      naming the members that did not arrive;
//   5. once all ARRIVED messages are in, a GAVE_UP reported by the same MPI_Testsome fails the
//      call too, naming the members that gave up; and when this instance may have been the late
//      one (it arrived more than the shortest timeout after its previous round over the set
//      began, or this is its first), it makes a few more MPI progress passes looking for a
//      GAVE_UP, so that a late arrival does not return as if everyone had met.
//
// GAVE_UP goes to every other member, not only to the missing ones: members still waiting for
// the same late instance then fail instead of completing later, and a member that did complete
// the round finds the notice at the start of its next timed round over the set.
//
// The remaining race (inherent to any timeout; it is the two-generals problem): a member that
// arrives within microseconds of another's deadline can complete its round and look for GAVE_UP
// before that member has sent it, and so return normally while the other raised TimeoutError.
// The set is then abandoned on one side only; the survivor finds the GAVE_UP at its next timed
// synchronize over the set (an untimed synchronize does not look, to stay a plain MPI_Barrier).
//
// Why it is shaped for speed (the target: a timed synchronize within 1.5x an untimed one): the same
// exchange written bare costs about one MPI_Barrier, and what made popdist's 4x slower was
// around it: an MPI_Improbe for GAVE_UP in every poll iteration (each one a full MPI progress
// pass), an explicit yield per iteration, and heap allocations per call. So the GAVE_UP receive
// stays posted and is polled in the same MPI_Testsome as the rest; the buffers and requests
// live in the set's TimedRounds; and the loop spins for its first microseconds (a barrier
// between running processes completes in that time), yielding only after that so that an
// oversubscribed machine still runs the members we wait for, and sleeping between polls once
// the wait is long (a late member, a long timeout) so that it does not burn a core.
//
// Nothing here is a collective, so the job can still finalize after a timeout: unmatched
// messages are left in MPI's queues, send requests are released at finalize, and finalize
// cancels the GAVE_UP receives (cancel_timed_receives).
#include "runtime/timed_barrier.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "popdist/error.hpp"
#include "runtime/instance_sets.hpp"
#include "runtime/mpi_call.hpp"
#include "runtime/pending_sends.hpp"
#include "runtime/registry_state.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/timed_rounds.hpp"

namespace popdist::detail {
namespace {

using Clock = std::chrono::steady_clock;

/// Polling back-off (see the top of this file): spin on MPI_Testsome for this long, then yield
/// between polls until kYieldFor, then sleep kSleepBetweenPolls between polls.
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::milliseconds(10);
constexpr auto kSleepBetweenPolls = std::chrono::microseconds(50);
/// How many MPI progress passes (at most kLateNoticeGrace) step 5 makes looking for a GAVE_UP
/// when this instance may be the late one: a notice sent before we arrived is in this process's
/// queues already and needs passes, not time (measured: one that step 2's pass missed was always
/// found by the next pass). Few, since every first timed round over a set pays for them.
constexpr int kLateNoticePasses = 8;
constexpr auto kLateNoticeGrace = std::chrono::milliseconds(1);

std::vector<char> bytes_of(const Round& round) {
  std::vector<char> bytes(sizeof round);
  std::memcpy(bytes.data(), &round, sizeof round);
  return bytes;
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
  check_mpi(MPI_Irecv(&rounds.gave_up_notice, sizeof(Round), MPI_BYTE, MPI_ANY_SOURCE, entry.gave_up_tag, control,
                      &rounds.gave_up_request()),
            "MPI_Irecv");
}

/// The set's TimedRounds, made (and its GAVE_UP receive posted) on its first timed round.
TimedRounds& rounds_of(Entry& entry, int me, MPI_Comm control) {
  if (!entry.timed) {
    std::vector<int> others;
    for (const auto member : entry.members) {
      if (member != me) others.push_back(member);
    }
    entry.timed = std::make_unique<TimedRounds>(std::move(others));
    post_gave_up_receive(entry, *entry.timed, control);
  }
  return *entry.timed;
}

/// Receives the further GAVE_UP notices already queued for this set, after the posted receive
/// took the first one (the failure path only, so probing is fine here), adding their senders.
void drain_gave_up(const Entry& entry, MPI_Comm control, std::vector<int>& givers) {
  for (;;) {
    int flag = 0;
    MPI_Message matched = MPI_MESSAGE_NULL;
    MPI_Status status;
    Round notice;
    {
      MpiLock lock;
      check_mpi(MPI_Improbe(MPI_ANY_SOURCE, entry.gave_up_tag, control, &flag, &matched, &status), "MPI_Improbe");
      if (flag == 0) break;
      check_mpi(MPI_Mrecv(&notice, sizeof notice, MPI_BYTE, &matched, MPI_STATUS_IGNORE), "MPI_Mrecv");
    }
    // A notice for another set whose tag collides with ours is dropped (its hash differs).
    if (notice.hash == entry.hash) givers.push_back(status.MPI_SOURCE);
  }
}

/// After the GAVE_UP receive completed with `status`: the members that gave up (for this round
/// or an earlier one: either way the set is abandoned on their side), sorted; the receive is
/// then not posted again, as the set is about to be abandoned here too. Empty for another set's
/// notice whose tag collides with ours (its hash differs): the receive is posted again.
std::vector<int> take_gave_up(const Entry& entry, TimedRounds& rounds, const MPI_Status& status, MPI_Comm control) {
  std::vector<int> givers;
  if (rounds.gave_up_notice.hash != entry.hash) {
    post_gave_up_receive(entry, rounds, control);
    return givers;
  }
  givers.push_back(status.MPI_SOURCE);
  drain_gave_up(entry, control, givers);
  std::sort(givers.begin(), givers.end());
  givers.erase(std::unique(givers.begin(), givers.end()), givers.end());
  return givers;
}

/// Whether a GAVE_UP has come (MPI_Test: one progress pass when it has not): its senders, or
/// empty.
std::vector<int> test_gave_up(const Entry& entry, TimedRounds& rounds, MPI_Comm control) {
  if (rounds.gave_up_request() == MPI_REQUEST_NULL) return {};
  int flag = 0;
  MPI_Status status;
  {
    MpiLock lock;
    check_mpi(MPI_Test(&rounds.gave_up_request(), &flag, &status), "MPI_Test");
  }
  return flag != 0 ? take_gave_up(entry, rounds, status, control) : std::vector<int>();
}

/// Holds the set's `timed_in_progress` for one round: a second thread gets an error instead of
/// sharing the set's buffers and requests.
class RoundInProgress {
 public:
  explicit RoundInProgress(Entry& entry) : entry_(entry) {
    if (entry.timed_in_progress.exchange(true, std::memory_order_acquire)) {
      throw UsageError(fmt::format("synchronize over {} ('{}'): another thread of this instance is already in a timed "
                                   "synchronize over this set; one synchronize per set at a time",
                                   format_set(entry.members), entry.name));
    }
  }
  ~RoundInProgress() { entry_.timed_in_progress.store(false, std::memory_order_release); }
  RoundInProgress(const RoundInProgress&) = delete;
  RoundInProgress& operator=(const RoundInProgress&) = delete;

 private:
  Entry& entry_;
};

/// On every way out of a round (exceptions included): cancels the ARRIVED receives still
/// posted, so that none of them takes the next round's message, and hands the sends still in
/// flight (to a member that never came, or simply not yet done) to PendingSends, with a
/// reference to their buffer.
class RoundCleanup {
 public:
  explicit RoundCleanup(TimedRounds& rounds) : rounds_(rounds) {}
  RoundCleanup(const RoundCleanup&) = delete;
  RoundCleanup& operator=(const RoundCleanup&) = delete;
  ~RoundCleanup() {
    for (std::size_t i = 0; i < rounds_.count(); ++i) {
      auto& receive = rounds_.requests[i];
      if (receive != MPI_REQUEST_NULL) {
        MpiLock lock;
        MPI_Cancel(&receive);
        MPI_Wait(&receive, MPI_STATUS_IGNORE);
        receive = MPI_REQUEST_NULL;
      }
      auto& send = rounds_.requests[rounds_.send_index(i)];
      if (send != MPI_REQUEST_NULL) {
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

}  // namespace

void timed_barrier(Entry& entry, double seconds) {
  const auto& runtime = runtime_state();
  const int me = runtime.rank;
  const MPI_Comm control = runtime.control;
  if (entry.abandoned.load(std::memory_order_acquire)) throw_abandoned(entry, "synchronize");
  if (entry.members.size() < 2) return;  // the caller checked membership: nobody else to wait for
  // Bounded to ~30 years so that a huge timeout cannot overflow the clock arithmetic.
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(seconds, 1e9)));

  const RoundInProgress in_progress(entry);
  auto& rounds = rounds_of(entry, me, control);

  // A send of the previous round still in flight reads the old buffer: write a new one.
  if (rounds.outgoing.use_count() > 1) rounds.outgoing = std::make_shared<Round>();
  auto& mine = *rounds.outgoing;
  mine = Round{entry.hash, entry.timed_sequence.fetch_add(1) + 1, seconds};
  const bool had_previous_round = rounds.has_previous_round;
  const auto previous_start = rounds.previous_start;
  rounds.previous_start = start;
  rounds.has_previous_round = true;
  const auto count = rounds.count();
  std::fill(rounds.arrived.begin(), rounds.arrived.end(), 0);
  std::size_t remaining = count;
  const RoundCleanup cleanup(rounds);

  const auto post_receive = [&](std::size_t i) {
    MpiLock lock;
    check_mpi(MPI_Irecv(&rounds.incoming[i], sizeof(Round), MPI_BYTE, rounds.others[i], entry.arrived_tag, control,
                        &rounds.requests[i]),
              "MPI_Irecv");
  };
  // A received ARRIVED: ours (count it), another set's whose tag collides (listen again), or
  // a different round of ours, which means the members called synchronize a different number
  // of times on this set.
  const auto accept = [&](std::size_t i) {
    const auto& incoming = rounds.incoming[i];
    if (incoming.hash != mine.hash) {
      post_receive(i);
      return;
    }
    if (incoming.sequence != mine.sequence) {
      abandon(entry, "the members were out of step");
      throw Error(fmt::format("synchronize over {} ('{}'): instance {} is at its timed synchronize #{} over this set "
                              "but this instance (instance {}) is at #{}; every member must make the same calls",
                              format_set(entry.members), entry.name, rounds.others[i], incoming.sequence, me,
                              mine.sequence));
    }
    rounds.arrived[i] = 1;
    --remaining;
  };
  const auto cancel_outstanding = [&] {
    for (std::size_t i = 0; i < count; ++i) {
      auto& receive = rounds.requests[i];
      if (receive == MPI_REQUEST_NULL) continue;
      MPI_Status status;
      int cancelled = 0;
      {
        MpiLock lock;
        check_mpi(MPI_Cancel(&receive), "MPI_Cancel");
        check_mpi(MPI_Wait(&receive, &status), "MPI_Wait");
        check_mpi(MPI_Test_cancelled(&status, &cancelled), "MPI_Test_cancelled");
      }
      // Matched while we were cancelling: the member did arrive just in time.
      const auto& incoming = rounds.incoming[i];
      if (cancelled == 0 && incoming.hash == mine.hash && incoming.sequence == mine.sequence) {
        rounds.arrived[i] = 1;
        --remaining;
      }
    }
  };

  // 1. Listen, then announce.
  for (std::size_t i = 0; i < count; ++i) post_receive(i);
  {
    MpiLock lock;
    for (std::size_t i = 0; i < count; ++i) {
      check_mpi(MPI_Isend(&mine, sizeof(Round), MPI_BYTE, rounds.others[i], entry.arrived_tag, control,
                          &rounds.requests[rounds.send_index(i)]),
                "MPI_Isend");
    }
  }

  // 2. Had a member given up on us already (we are the late one, or it gave up on an earlier
  //    round that we completed: the race described above)? Looked at after our sends are out,
  //    so that the MPI progress pass this takes delays nobody; that pass also takes in whatever
  //    has arrived, so a late instance sees the notices sent to it.
  if (const auto givers = test_gave_up(entry, rounds, control); !givers.empty()) {
    throw_others_gave_up(entry, givers, seconds, me);
  }

  // 3. Poll: one MPI_Testsome over the ARRIVED receives, the GAVE_UP receive and our sends.
  const auto total = static_cast<int>(rounds.requests.size());
  std::vector<int> early_givers;  // members that gave up on this round while we still waited
  while (remaining > 0) {
    int completed = 0;
    {
      MpiLock lock;
      check_mpi(MPI_Testsome(total, rounds.requests.data(), &completed, rounds.done.data(), rounds.statuses.data()),
                "MPI_Testsome");
    }
    // (completed is never MPI_UNDEFINED here: the receives still outstanding are active.)
    for (int k = 0; k < completed; ++k) {
      const auto index = static_cast<std::size_t>(rounds.done[static_cast<std::size_t>(k)]);
      if (index < count) {
        accept(index);
      } else if (index == rounds.gave_up_index()) {
        early_givers = take_gave_up(entry, rounds, rounds.statuses[static_cast<std::size_t>(k)], control);
        // A notice for an earlier round (which we completed: the race described at the top)
        // fails the call like one found at step 2.
        if (!early_givers.empty() && rounds.gave_up_notice.sequence < mine.sequence) {
          throw_others_gave_up(entry, early_givers, seconds, me);
        }
      }  // else one of our sends completed: nothing to do
    }
    if (remaining == 0) break;
    if (!early_givers.empty()) {
      cancel_outstanding();
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      cancel_outstanding();
      break;
    }
    if (now - start >= kYieldFor) {
      std::this_thread::sleep_for(kSleepBetweenPolls);
    } else if (now - start >= kSpinFor) {
      std::this_thread::yield();
    }
  }

  // 4. Timed out, or another member gave up while some members had not reached us either:
  //    either way name the members that did not arrive here.
  if (remaining > 0) {
    std::vector<int> missing;
    for (std::size_t i = 0; i < count; ++i) {
      if (rounds.arrived[i] == 0) missing.push_back(rounds.others[i]);
    }
    const auto notice = bytes_of(mine);
    for (const auto other : rounds.others) pending_sends().send(notice, other, entry.gave_up_tag, control);
    const auto text = fmt::format(
        "synchronize over {} ('{}') {}: instance{} {} did not arrive; the set is now abandoned",
        format_set(entry.members), entry.name,
        early_givers.empty() ? fmt::format("timed out after {} s", seconds)
                             : fmt::format("failed (instance{} {} gave up waiting first; this call's timeout: {} s)",
                                           early_givers.size() == 1 ? "" : "s", fmt::join(early_givers, ", "), seconds),
        missing.size() == 1 ? "" : "s", fmt::join(missing, ", "));
    abandon(entry, fmt::format("instances {} did not arrive within {} s", fmt::join(missing, ", "), seconds));
    throw TimeoutError(text, missing);
  }
  if (!early_givers.empty()) throw_others_gave_up(entry, early_givers, seconds, me);

  // 5. Everyone arrived. Were we the late one, whom the others gave up on before we arrived?
  //    Their notices were sent before we arrived, but MPI may still hold them behind their
  //    ARRIVED (measured with Open MPI after earlier rounds: step 2's single pass missed them
  //    about one time in three), so look again, with progress passes of our own -- but only
  //    when we can be late. Member p started this round after completing the previous one,
  //    which needed our previous ARRIVED, sent after our previous start; p gives up no sooner
  //    than its timeout after its start. So if we arrived within the shortest of the members'
  //    timeouts (each ARRIVED carries it) of our previous round's start, nobody can have given
  //    up on us before we arrived, and a synchronize called in a loop never pays for this look.
  //    A notice that comes later still is found by step 2 of our next timed round over the set
  //    (the race described at the top).
  double shortest_timeout = seconds;
  for (const auto& incoming : rounds.incoming) shortest_timeout = std::min(shortest_timeout, incoming.timeout);
  const bool may_be_late =
      !had_previous_round || start - previous_start > std::chrono::duration<double>(shortest_timeout);
  if (may_be_late) {
    const auto until = std::min(deadline, Clock::now() + kLateNoticeGrace);
    for (int pass = 0; pass < kLateNoticePasses && (pass == 0 || Clock::now() < until); ++pass) {
      if (const auto givers = test_gave_up(entry, rounds, control); !givers.empty()) {
        throw_others_gave_up(entry, givers, seconds, me);
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
