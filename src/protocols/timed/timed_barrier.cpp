// The timed barrier: synchronize() with a timeout over a set's members (timed_barrier.hpp). Each
// round is a recursive-doubling exchange of ARRIVED messages over the members' positions
// (timed_rounds.hpp), with a GAVE_UP receive kept posted per set; a member whose deadline passes
// names the missing in a roll call (roll_call.hpp, timed_failure.cpp). Over all instances the host
// barrier's timed forms take over (on one host its shared-memory wait, across hosts
// timed_hosts.cpp). A round's steps 1 to 5 and their races are TimedWait's (timed_wait.hpp), shared
// with the round across hosts; FlatRound supplies the exchange. Why it is shaped so, the late look,
// the race no timeout escapes, and what it costs: docs/guide/protocols.md, "The timed barrier".
// Nothing here is a collective, so the job can still finalize after a timeout.
#include "protocols/timed/timed_barrier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "mpi/clock.hpp"
#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "protocols/host_barrier/host_barrier.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/synchronize_guard.hpp"
#include "protocols/timed/round_exchange.hpp"
#include "protocols/timed/timed_failure.hpp"
#include "protocols/timed/timed_hosts.hpp"
#include "protocols/timed/timed_rounds.hpp"
#include "protocols/timed/timed_wait.hpp"
#include "protocols/timed/waited_in.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {
namespace {

using Clock = MpiClock;  // MPI's clock: simulated time under SMPI (mpi/clock.hpp)

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

/// The flat round over the set's members: a recursive-doubling exchange of ARRIVED messages over
/// their positions (round_exchange.hpp). TimedWait runs the steps; this round adds the exchange,
/// the shortest timeout heard of, and the check that every member is at the same round. Its
/// destruction cancels the receives still posted and hands the sends in flight to PendingSends
/// (RoundCleanup).
class FlatRound : public TimedWait<FlatRound> {
 public:
  FlatRound(ProtocolSet& entry, double seconds, Clock::time_point start, int me, MPI_Comm control)
      : TimedWait(entry, seconds, start, me, control),
        shortest_timeout_(seconds),
        exchange_(rounds_, control, entry.arrived_tag),
        cleanup_(rounds_) {}

 private:
  friend class TimedWait<FlatRound>;
  /// A member in another popdist operation over the same members can never meet this one.
  static constexpr bool kFailsOnOtherOperation = true;

  // 1. Listen to every step, then send step 0.
  std::vector<int> arrive() {
    exchange_.listen();
    send_ready_steps();
    return {};
  }

  // 3. Take the ARRIVED of the lowest step not in yet (and of the steps after it already in),
  //    sending each next step as soon as the steps before it are in. Our sends are tested at the
  //    end of the round (RoundCleanup).
  RoundProgress poll() {
    exchange_.take_arrivals([this](std::size_t step) { accept(step); });
    send_ready_steps();
    return exchange_.remaining() == 0 ? RoundProgress::Met : RoundProgress::Waiting;
  }

  /// Nothing to undo here: the members still waiting learn it from the roll call.
  static bool give_up() noexcept { return true; }
  static void pause(Clock::duration waited, int /*polls*/) {
    pause_between_polls(waited, kSpinFor, kYieldFor, kSleepBetweenPolls);
  }
  /// The exchange's receives stay posted until the round is destroyed (RoundCleanup).
  static void end_exchange() noexcept {}
  [[nodiscard]] double shortest_timeout() const noexcept { return shortest_timeout_; }

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

  double shortest_timeout_;  ///< of the members heard of, directly or not
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
