#pragma once
// What a set keeps between timed synchronize rounds (timed_barrier.cpp), so that a round makes
// no heap allocation and its poll tests one request: the dissemination partners of
// each step, the receive buffers, one array of requests, and the GAVE_UP receive that stays
// posted for the set's lifetime instead of being probed for (MPI_Improbe) before, during and
// after every round.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi/clock.hpp"

namespace popdist::detail {

/// The payload of ARRIVED and GAVE_UP: the full set hash (tags are only hash modulo the tag
/// space), the round, and a timeout: in ARRIVED the shortest timeout the sender has heard of in
/// this round (its own and those of the steps it received), so that after the last step every
/// member knows the shortest timeout of all members (see timed_barrier.cpp, "the late look");
/// in GAVE_UP the sender's own.
struct Round {
  std::uint64_t hash = 0;
  std::uint64_t sequence = 0;
  double timeout = 0;  ///< seconds
};

/// The number of steps of a dissemination barrier over `count` members: ceil(log2(count)).
[[nodiscard]] constexpr std::size_t dissemination_steps(std::size_t count) noexcept {
  std::size_t steps = 0;
  for (std::size_t reach = 1; reach < count; reach *= 2) ++steps;
  return steps;
}

/// Made on a set's first timed synchronize; lives as long as its Entry (entries are never
/// deleted, so MPI may keep writing into it until finalize cancels the GAVE_UP receive).
struct TimedRounds {
  /// `members` sorted, `me` among them.
  TimedRounds(const std::vector<int>& members, int me)
      : steps(dissemination_steps(members.size())),
        incoming(steps),
        requests(2 * steps + 1, MPI_REQUEST_NULL),
        received(steps, 0),
        outgoing(std::make_shared<std::vector<Round>>(steps)) {
    const auto count = members.size();
    const auto position =
        static_cast<std::size_t>(std::lower_bound(members.begin(), members.end(), me) - members.begin());
    for (std::size_t step = 0, reach = 1; step < steps; ++step, reach *= 2) {
      send_to.push_back(members[(position + reach) % count]);
      receive_from.push_back(members[(position + count - reach) % count]);  // reach < count
    }
    for (const auto member : members) {
      if (member != me) others.push_back(member);
    }
  }

  /// requests = [ARRIVED receive of step s]... [GAVE_UP receive] [ARRIVED send of step s]...
  [[nodiscard]] std::size_t gave_up_index() const noexcept { return steps; }
  [[nodiscard]] std::size_t send_index(std::size_t step) const noexcept { return steps + 1 + step; }
  MPI_Request& gave_up_request() noexcept { return requests[gave_up_index()]; }

  std::size_t steps;                ///< ceil(log2(members))
  std::vector<int> send_to;         ///< by step: the member `2^step` positions after this one
  std::vector<int> receive_from;    ///< by step: the member `2^step` positions before this one
  std::vector<int> others;          ///< the members but this instance, sorted (GAVE_UP goes to all)
  std::vector<Round> incoming;      ///< ARRIVED payloads, by step
  Round gave_up_notice;             ///< the GAVE_UP payload (MPI_ANY_SOURCE)
  std::vector<MPI_Request> requests;
  std::vector<char> received;        ///< by step, this round (char, not the bit-packed vector<bool>)
  /// This round's ARRIVED payloads, by step. Shared: a send still in flight at the end of its
  /// round is handed to PendingSends with a reference to them, and the next round then writes new
  /// ones.
  std::shared_ptr<std::vector<Round>> outgoing;
  /// When this instance started its previous timed round over the set (the late look's bound).
  MpiClock::time_point previous_start;
  bool has_previous_round = false;
};

}  // namespace popdist::detail
