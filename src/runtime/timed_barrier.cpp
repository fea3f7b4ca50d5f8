// The timed barrier protocol, per round (each round has a per-set sequence number):
//
//   1. every member posts an Irecv for an ARRIVED(set hash, seq) from every other member, then
//      sends its own ARRIVED to every other member (non-blocking; the buffers live in
//      PendingSends, since a receiver may never come);
//   2. it polls (MPI_Testsome + yield) until all ARRIVED messages are in, or the deadline;
//   3. on the deadline it cancels the receives still outstanding (a receive that matched during
//      the cancel counts as an arrival), sends GAVE_UP(hash, seq) to every other member, marks
//      the set abandoned and throws TimeoutError naming the members that did not arrive;
//   4. once all ARRIVED messages are in, it looks (MPI_Improbe) for a GAVE_UP from any member:
//      a late arrival thus finds that the others gave up and fails too, naming them, instead of
//      returning as if everyone had met. A GAVE_UP seen while still waiting fails at once.
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
// Nothing here is a collective, so the job can still finalize after a timeout: unmatched
// messages are left in MPI's queues and their send requests are released at finalize.
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

namespace popdist::detail {
namespace {

/// The payload of ARRIVED and GAVE_UP: the full set hash (tags are only hash modulo the tag
/// space) and the round.
struct Round {
  std::uint64_t hash = 0;
  std::uint64_t sequence = 0;
};

std::vector<char> bytes_of(const Round& round) {
  std::vector<char> bytes(sizeof round);
  std::memcpy(bytes.data(), &round, sizeof round);
  return bytes;
}

void abandon(Entry& entry, std::string reason) {
  if (!entry.abandoned.load(std::memory_order_acquire)) {
    entry.abandoned_reason = std::move(reason);
    entry.abandoned.store(true, std::memory_order_release);
  }
}

/// Receives every GAVE_UP notice queued for this set; returns the members that sent one (for
/// this round or an earlier one: either way the set is abandoned on their side).
std::vector<int> collect_gave_up(const Entry& entry, MPI_Comm control) {
  std::vector<int> givers;
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
  std::sort(givers.begin(), givers.end());
  givers.erase(std::unique(givers.begin(), givers.end()), givers.end());
  return givers;
}

/// Cancels, on every way out (exceptions included), the receives still posted: MPI must never
/// write into `incoming` after it is gone.
class OutstandingReceives {
 public:
  explicit OutstandingReceives(std::vector<MPI_Request>& requests) : requests_(requests) {}
  OutstandingReceives(const OutstandingReceives&) = delete;
  OutstandingReceives& operator=(const OutstandingReceives&) = delete;
  ~OutstandingReceives() {
    for (auto& request : requests_) {
      if (request == MPI_REQUEST_NULL) continue;
      MpiLock lock;
      MPI_Cancel(&request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
  }

 private:
  std::vector<MPI_Request>& requests_;
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
  std::vector<int> others;
  for (const auto member : entry.members) {
    if (member != me) others.push_back(member);
  }
  if (others.empty()) return;
  // Bounded to ~30 years so that a huge timeout cannot overflow the clock arithmetic.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(std::min(seconds, 1e9)));

  // A member that gave up on an earlier round we completed (the race described above).
  if (const auto givers = collect_gave_up(entry, control); !givers.empty()) {
    throw_others_gave_up(entry, givers, seconds, me);
  }

  const Round mine{entry.hash, entry.timed_sequence.fetch_add(1) + 1};
  const auto count = others.size();
  std::vector<Round> incoming(count);
  std::vector<MPI_Request> receives(count, MPI_REQUEST_NULL);
  const OutstandingReceives cancel_on_exit(receives);
  std::vector<bool> arrived(count, false);
  std::size_t remaining = count;

  const auto post_receive = [&](std::size_t i) {
    MpiLock lock;
    check_mpi(MPI_Irecv(&incoming[i], sizeof(Round), MPI_BYTE, others[i], entry.arrived_tag, control, &receives[i]),
              "MPI_Irecv");
  };
  // A received ARRIVED: ours (count it), another set's whose tag collides (listen again), or
  // a different round of ours, which means the members called synchronize a different number
  // of times on this set.
  const auto accept = [&](std::size_t i) {
    if (incoming[i].hash != mine.hash) {
      post_receive(i);
      return;
    }
    if (incoming[i].sequence != mine.sequence) {
      abandon(entry, "the members were out of step");
      throw Error(fmt::format("synchronize over {} ('{}'): instance {} is at its timed synchronize #{} over this set "
                              "but this instance (instance {}) is at #{}; every member must make the same calls",
                              format_set(entry.members), entry.name, others[i], incoming[i].sequence, me,
                              mine.sequence));
    }
    arrived[i] = true;
    --remaining;
  };
  const auto cancel_outstanding = [&] {
    for (std::size_t i = 0; i < count; ++i) {
      if (receives[i] == MPI_REQUEST_NULL) continue;
      MPI_Status status;
      int cancelled = 0;
      {
        MpiLock lock;
        check_mpi(MPI_Cancel(&receives[i]), "MPI_Cancel");
        check_mpi(MPI_Wait(&receives[i], &status), "MPI_Wait");
        check_mpi(MPI_Test_cancelled(&status, &cancelled), "MPI_Test_cancelled");
      }
      // Matched while we were cancelling: the member did arrive just in time.
      if (cancelled == 0 && incoming[i].hash == mine.hash && incoming[i].sequence == mine.sequence) {
        arrived[i] = true;
        --remaining;
      }
    }
  };

  for (std::size_t i = 0; i < count; ++i) post_receive(i);
  const auto announcement = bytes_of(mine);
  for (const auto other : others) pending_sends().send(announcement, other, entry.arrived_tag, control);

  std::vector<int> done(count);
  std::vector<int> early_givers;  // members that gave up on this round while we still waited
  while (remaining > 0) {
    int completed = 0;
    {
      MpiLock lock;
      check_mpi(MPI_Testsome(static_cast<int>(count), receives.data(), &completed, done.data(), MPI_STATUSES_IGNORE),
                "MPI_Testsome");
    }
    for (int k = 0; k < completed; ++k) accept(static_cast<std::size_t>(done[k]));
    if (remaining == 0) break;
    early_givers = collect_gave_up(entry, control);
    if (!early_givers.empty() || std::chrono::steady_clock::now() >= deadline) {
      cancel_outstanding();
      break;
    }
    std::this_thread::yield();
  }

  if (remaining > 0) {
    // Timed out, or another member gave up while some members had not reached us either:
    // either way name the members that did not arrive here.
    std::vector<int> missing;
    for (std::size_t i = 0; i < count; ++i) {
      if (!arrived[i]) missing.push_back(others[i]);
    }
    const auto notice = bytes_of(mine);
    for (const auto other : others) pending_sends().send(notice, other, entry.gave_up_tag, control);
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

  // Everyone arrived; but a member may have given up before we did (we are the late one).
  if (const auto givers = collect_gave_up(entry, control); !givers.empty()) {
    throw_others_gave_up(entry, givers, seconds, me);
  }
  pending_sends().reap();
}

}  // namespace popdist::detail
