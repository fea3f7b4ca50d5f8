// A timed synchronize over all instances across hosts, shaped like the untimed one
// (host_barrier.hpp): the instances of a host meet in its shared-memory counter, with no message;
// each host's leader then meets the other leaders in a recursive-doubling round (LeadersRound) and
// releases its host. The counter's "gave up" bit makes an instance either released or giving up,
// never both; a failed round joins the flat protocol's roll call over all instances, which names
// the missing. The steps and their races are TimedWait's (timed_wait.hpp); HostsRound supplies the
// host's part. Why, and what it costs: docs/guide/protocols.md, "Across hosts".
#include "protocols/timed/timed_hosts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "protocols/host_barrier/host_barrier.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/protocol_set.hpp"
#include "protocols/timed/round_exchange.hpp"
#include "protocols/timed/timed_failure.hpp"
#include "protocols/timed/timed_wait.hpp"

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

/// The round across hosts: this instance counted in its host's shared-memory round, and a
/// host's leader meeting the other leaders (LeadersRound) once its whole host has arrived, then
/// releasing it. TimedWait runs the steps; this round adds the host's counter, whose "gave up" bit
/// makes an instance either released or giving up, never both.
class HostsRound : public TimedWait<HostsRound> {
 public:
  HostsRound(ProtocolSet& entry, HostBarrier& host, double seconds, Clock::time_point start, int me, MPI_Comm control)
      : TimedWait(entry, seconds, start, me, control), host_(host) {}

 private:
  friend class TimedWait<HostsRound>;
  /// Left to the deadline, as it always was here: leaving at once would first have to give the
  /// host's round up for its other instances.
  static constexpr bool kFailsOnOtherOperation = false;

  // 1. Counted in the host's round (no message yet): who had given it up before this one came.
  std::vector<int> arrive() {
    arrival_ = host_.arrive_across();
    if (!arrival_.late) return {};
    return {host_.failure_across(arrival_.round, true).gave_up_by};
  }

  // 3. Released, given up (by an instance of this host), or, on a leader whose host has arrived,
  //    the leaders' round: met once every step is in, unless an instance of the host gave up first.
  RoundProgress poll() {
    const auto state = host_.state_across(arrival_.round);
    if (state == HostBarrier::Across::Released) return RoundProgress::Met;
    if (state == HostBarrier::Across::GivenUp) return RoundProgress::GivenUp;
    if (host_.leads() && (leaders_ || state == HostBarrier::Across::HostArrived)) {
      if (!leaders_) {
        leaders_.emplace(entry_, leader_rounds_of(entry_, host_.leaders(), host_.leaders_size()), host_.leaders(),
                         mine_);
      }
      if (leaders_->poll()) return host_.finish_across(arrival_.round) ? RoundProgress::Met : RoundProgress::GivenUp;
    }
    return RoundProgress::Waiting;
  }

  /// Gives the host's round up (wakes its sleepers); false when its leader released it meanwhile
  /// (the race of the guide's "Across hosts").
  bool give_up() noexcept { return host_.give_up_across(arrival_.round); }
  /// A leader polls as the flat round does; a non-leader sleeps on its host's release.
  void pause(Clock::duration waited, int polls) const {
    if (host_.leads()) {
      pause_between_polls(waited, kSpinFor, kYieldFor, kSleepBetweenPolls);
    } else {
      host_.pause_across(arrival_.round, polls, kLongestSleep);
    }
  }
  void end_exchange() { leaders_.reset(); }  // cancels the leaders' receives still posted
  /// A non-leader hears no other member's timeout: the late look is measured against its own.
  [[nodiscard]] double shortest_timeout() const noexcept { return seconds_; }

  HostBarrier& host_;
  HostBarrier::Arrival arrival_;
  std::optional<LeadersRound> leaders_;  ///< a leader's, once its host has arrived
};

}  // namespace

void timed_across_hosts(ProtocolSet& entry, HostBarrier& host, double seconds, Clock::time_point start,
                        Clock::time_point deadline, int me, MPI_Comm control) {
  HostsRound(entry, host, seconds, start, me, control).run(deadline);
}

}  // namespace popdist::detail
