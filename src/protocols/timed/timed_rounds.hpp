#pragma once
// What a set keeps between timed synchronize rounds (timed_barrier.cpp), so that a round makes
// no heap allocation and its poll tests one request: the recursive-doubling partners of
// each step, the receive buffers, one array of requests, and the GAVE_UP receive that stays
// posted for the set's lifetime instead of being probed for (MPI_Improbe) before, during and
// after every round.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "mpi/clock.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/timed/roll_call.hpp"

namespace popdist::detail {

/// The payload of ARRIVED: the full set hash (tags are only hash modulo the tag space), the
/// round, and the shortest timeout the sender has heard of in this round (its own and those of
/// the steps it received), so that after the last step every member knows the shortest timeout
/// of all members (docs/guide/protocols.md, "The timed barrier": the late look).
struct Round {
  std::uint64_t hash = 0;
  std::uint64_t sequence = 0;
  double timeout = 0;  ///< seconds
};

/// The head of a GAVE_UP message, a message of the failure path's roll call (roll_call.hpp): the
/// set hash and round as in Round, the sender's timeout, the roll call's kind and level; then a
/// bitmap of the members the sender knows present, one bit per position of the sorted members.
struct Notice {
  std::uint64_t hash = 0;
  std::uint64_t sequence = 0;
  double timeout = 0;  ///< seconds
  std::int32_t kind = 0;
  std::int32_t level = 0;
};

/// A step's partner when the step only sends or only receives (recursive doubling's fold).
constexpr int kNoPartner = -1;

/// The steps of a recursive-doubling barrier over the positions of `count` sorted members, for
/// the member at `position`, as (send to, receive from) positions (kNoPartner: none). With p2 the
/// largest power of two <= count: at step s of the log2(p2) exchange steps, positions below p2
/// exchange with position XOR 2^s; a position p2 + i above them folds into position i (sends to
/// it first, is released by it last), and position i waits for it before its first exchange and
/// releases it after its last: at most ceil(log2 count) sends per member, ceil(log2 count) + 1
/// latencies on the critical path when count is not a power of two, log2 count when it is.
/// (Why not dissemination, position + 2^s: it crosses switches of a tree network at every step
/// for the positions near a block's end; XOR partners stay inside the smallest subtree holding
/// both, so fewer steps cross the tree's upper switches; tests/bench/README.md, "Simulated
/// clusters", has the measurement.)
struct Step {
  std::size_t send_to = 0;
  std::size_t receive_from = 0;
  bool sends = true;
  bool receives = true;
};
[[nodiscard]] inline std::vector<Step> recursive_doubling_steps(std::size_t count, std::size_t position) {
  std::vector<Step> steps;
  if (count < 2) return steps;
  std::size_t p2 = 1;
  while (p2 * 2 <= count) p2 *= 2;
  if (position >= p2) {
    steps.push_back({position - p2, position - p2, true, true});  // arrive at the partner; its release
    return steps;
  }
  const bool has_extra = position + p2 < count;
  if (has_extra) steps.push_back({0, position + p2, false, true});  // the extra member's arrival
  for (std::size_t bit = 1; bit < p2; bit *= 2) steps.push_back({position ^ bit, position ^ bit, true, true});
  if (has_extra) steps.push_back({position + p2, 0, true, false});  // its release
  return steps;
}

/// Made on a set's first timed synchronize; lives as long as its set (sets are never
/// deleted, so MPI may keep writing into it until finalize cancels the GAVE_UP receive).
struct TimedRounds {
  /// `members` sorted, `me` among them.
  /// `instances`: how many the job has (a GAVE_UP message of any set fits the receive buffer).
  TimedRounds(const std::vector<int>& members, int me, std::size_t instances)
      : TimedRounds(members, instances, recursive_doubling_steps(members.size(), position_of(members, me))) {}
  TimedRounds(const std::vector<int>& members, std::size_t instances, const std::vector<Step>& schedule)
      : steps(schedule.size()),
        incoming(steps),
        gave_up_notice(sizeof(Notice) + RollCall::bytes_for(instances)),
        requests(2 * steps + 1, MPI_REQUEST_NULL),
        received(steps, 0),
        outgoing(std::make_shared<std::vector<Round>>(steps)) {
    for (const auto& step : schedule) {
      send_to.push_back(step.sends ? members[step.send_to] : kNoPartner);
      receive_from.push_back(step.receives ? members[step.receive_from] : kNoPartner);
      if (step.receives) ++receives;
    }
  }

  /// requests = [ARRIVED receive of step s]... [GAVE_UP receive] [ARRIVED send of step s]...
  [[nodiscard]] std::size_t gave_up_index() const noexcept { return steps; }
  [[nodiscard]] std::size_t send_index(std::size_t step) const noexcept { return steps + 1 + step; }
  MPI_Request& gave_up_request() noexcept { return requests[gave_up_index()]; }

  std::size_t steps;                ///< this member's steps (recursive_doubling_steps)
  std::size_t receives = 0;         ///< how many of them receive
  std::vector<int> send_to;         ///< by step: the instance it sends to, or kNoPartner
  std::vector<int> receive_from;    ///< by step: the instance it receives from, or kNoPartner
  std::vector<Round> incoming;      ///< ARRIVED payloads, by step
  /// The GAVE_UP receive's buffer (MPI_ANY_SOURCE): a Notice and a bitmap as long as the job's
  /// largest set could need, so that another set's message on a colliding tag is not truncated.
  std::vector<char> gave_up_notice;
  std::vector<MPI_Request> requests;
  std::vector<char> received;        ///< by step, this round (char, not the bit-packed vector<bool>)
  /// This round's ARRIVED payloads, by step. Shared: a send still in flight at the end of its
  /// round is handed to PendingSends with a reference to them, and the next round then writes new
  /// ones.
  std::shared_ptr<std::vector<Round>> outgoing;
  /// Records that a round starts at `start`; returns when the previous one started (none
  /// before the first): the late look's bound (timed_barrier.cpp, step 5).
  std::optional<MpiClock::time_point> begin_round(MpiClock::time_point start) noexcept {
    return std::exchange(previous_start, start);
  }
  /// Whether a round that started at `start` may have come after a member gave up on it: the
  /// first round, or one that started more than `timeout` seconds after the previous one.
  [[nodiscard]] static bool may_be_late(std::optional<MpiClock::time_point> previous, MpiClock::time_point start,
                                        double timeout) noexcept {
    return !previous || start - *previous > std::chrono::duration<double>(timeout);
  }
  /// When this instance started its latest timed round over the set.
  std::optional<MpiClock::time_point> previous_start;
};

}  // namespace popdist::detail
