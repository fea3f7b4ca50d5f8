// A timed synchronize over all instances across hosts, shaped like the untimed one
// (host_barrier.hpp): the instances of a host meet in its shared-memory counter, with no message;
// each host's leader then meets the other leaders in a recursive-doubling round (LeadersRound) and
// releases its host. The counter's "gave up" bit makes an instance either released or giving up,
// never both; a failed round joins the flat protocol's roll call over all instances, which names
// the missing. Why, and what it costs: docs/guide/protocols.md, "Across hosts".
#include "protocols/timed/timed_hosts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "mpi/interrupts.hpp"
#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "protocols/host_barrier/host_barrier.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/protocol_set.hpp"
#include "protocols/synchronize_guard.hpp"
#include "protocols/timed/round_exchange.hpp"
#include "protocols/timed/timed_failure.hpp"

namespace popdist::detail {
namespace {

using Clock = MpiClock;

/// The leaders' ARRIVED tag on the leaders' communicator, which no other message uses.
constexpr int kLeadersTag = 1;
/// How long a non-leader sleeps on its host's release before it looks for a roll call's message.
constexpr auto kLongestSleep = std::chrono::milliseconds(2);

/// The root scope's rounds among the leaders, by leader rank (made on a leader's first round).
TimedRounds& leader_rounds_of(ProtocolSet& entry, MPI_Comm leaders, int count) {
  if (!entry.timed_leaders) {
    int rank = 0;
    {
      MpiLock lock;
      check_mpi(MPI_Comm_rank(leaders, &rank), "MPI_Comm_rank");
    }
    std::vector<int> ranks(static_cast<std::size_t>(count));
    std::iota(ranks.begin(), ranks.end(), 0);
    entry.timed_leaders = std::make_unique<TimedRounds>(
        ranks, 0, recursive_doubling_steps(ranks.size(), static_cast<std::size_t>(rank)));
  }
  return *entry.timed_leaders;
}

/// One round among the leaders: the timed barrier's exchange (round_exchange.hpp) on the
/// leaders' communicator. Destroying it cancels what is still posted (RoundCleanup).
class LeadersRound {
 public:
  LeadersRound(ProtocolSet& entry, TimedRounds& rounds, MPI_Comm leaders, const Round& mine)
      : entry_(entry), mine_(mine), exchange_(rounds, leaders, kLeadersTag), rounds_(rounds), cleanup_(rounds) {
    exchange_.listen();
    exchange_.send_ready(mine_);
  }

  /// Takes what came in and sends what is ready: true once every step is in.
  bool poll() {
    exchange_.take_arrivals([this](std::size_t step) { accept(step); });
    exchange_.send_ready(mine_);
    return exchange_.remaining() == 0;
  }

 private:
  /// Only the root scope's rounds use the tag: a different round means the instances called a
  /// timed synchronize over all instances a different number of times.
  void accept(std::size_t step) {
    const auto& incoming = rounds_.incoming[step];
    if (incoming.hash != mine_.hash || incoming.sequence != mine_.sequence) {
      abandon(entry_, "the members were out of step");
      throw Error(fmt::format("synchronize over all instances: the leader of another host is at its timed synchronize "
                              "#{} over all instances but this host's leader is at #{}; every instance must make the "
                              "same calls",
                              incoming.sequence, mine_.sequence));
    }
    exchange_.count_in(step);
  }

  ProtocolSet& entry_;
  Round mine_;
  RoundExchange exchange_;
  TimedRounds& rounds_;
  RoundCleanup cleanup_;  ///< last: destroyed first
};

}  // namespace

void timed_across_hosts(ProtocolSet& entry, HostBarrier& host, double seconds, Clock::time_point start,
                        Clock::time_point deadline, int me, MPI_Comm control) {
  const TimedTurn in_turn(entry);
  auto& rounds = rounds_of(entry, me, control);  // the GAVE_UP receive, for the roll call
  const Round mine{entry.hash, entry.timed_sequence.fetch_add(1) + 1, seconds};
  const auto previous_start = rounds.begin_round(start);

  const auto arrival = host.arrive_across();
  if (arrival.late) {
    throw_others_gave_up(entry, {host.failure_across(arrival.round, true).gave_up_by}, seconds, me);
  }
  // Members that gave up on this one before it came (their roll call's message): as in
  // timed_barrier.cpp's step 2, after this instance was counted, so that the pass delays nobody.
  if (const auto heard = test_gave_up(entry, rounds, control); !heard.empty()) {
    host.give_up_across(arrival.round);
    throw_others_gave_up(entry, givers_of(entry, heard, me), seconds, me);
  }

  std::optional<LeadersRound> leaders;  // a leader's, once its host has arrived
  std::vector<Heard> early;             // a roll call's messages that came while this one waited
  InterruptPoll interrupts;
  std::optional<WaitedIn> waited;  // made once this wait is long: answers notices (waited_in.hpp)
  auto last_answer = start;
  bool met = false;
  for (int poll = 0;; ++poll) {
    const auto state = host.state_across(arrival.round);
    if (state == HostBarrier::Across::Released) {
      met = true;
      break;
    }
    if (state == HostBarrier::Across::GivenUp) break;
    if (host.leads() && (leaders || state == HostBarrier::Across::HostArrived)) {
      if (!leaders) {
        leaders.emplace(entry, leader_rounds_of(entry, host.leaders(), host.leaders_size()), host.leaders(), mine);
      }
      if (leaders->poll()) {
        met = host.finish_across(arrival.round);  // false: an instance of the host gave up first
        break;
      }
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      met = !host.give_up_across(arrival.round);  // released in the meantime: met after all
      break;
    }
    if (now - start >= kYieldFor) {
      early = test_gave_up(entry, rounds, control);
      if (!early.empty()) {
        // A roll call has started: take part, unless it is over (a Final, or a notice of an earlier
        // round) or this host was released meanwhile (the race of the guide's "Across hosts").
        const bool over = roll_call_is_over(early, mine.sequence);
        const bool released = !host.give_up_across(arrival.round);
        if (over || released) throw_others_gave_up(entry, givers_of(entry, early, me), seconds, me);
        break;
      }
      interrupts();
      if (now - last_answer >= InterruptPoll::kEvery) {
        last_answer = now;
        if (!waited) waited.emplace(entry, control);
        waited->take();
      }
    }
    if (host.leads()) {
      pause_between_polls(now - start, kSpinFor, kYieldFor, kSleepBetweenPolls);
    } else {
      host.pause_across(arrival.round, poll, kLongestSleep);
    }
  }
  leaders.reset();  // cancels the leaders' receives still posted
  if (!met) roll_call_and_fail(entry, rounds, mine, std::move(early), seconds, control);

  // The late look (timed_barrier.cpp, step 5): were we the one the others gave up on? Measured
  // against this call's own timeout (a non-leader hears no other's).
  if (TimedRounds::may_be_late(previous_start, start, seconds)) {
    look_for_late_notices(entry, rounds, control, deadline, seconds, me);
  }
}

}  // namespace popdist::detail
