#pragma once
// What a set keeps between timed synchronize rounds (timed_barrier.cpp), so that a round makes
// no heap allocation and its poll loop is a single MPI_Testsome: the peers, the receive
// buffers, one array of requests, and the GAVE_UP receive that stays posted for the set's
// lifetime instead of being probed for (MPI_Improbe) before, during and after every round.

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace popdist::detail {

/// The payload of ARRIVED and GAVE_UP: the full set hash (tags are only hash modulo the tag
/// space), the round, and the sender's timeout for it (which tells a receiver whether the sender
/// can have given up on it before it arrived: see timed_barrier.cpp, step 5).
struct Round {
  std::uint64_t hash = 0;
  std::uint64_t sequence = 0;
  double timeout = 0;  ///< seconds
};

/// Made on a set's first timed synchronize; lives as long as its Entry (entries are never
/// deleted, so MPI may keep writing into it until finalize cancels the GAVE_UP receive).
struct TimedRounds {
  explicit TimedRounds(std::vector<int> other_members)
      : others(std::move(other_members)),
        incoming(others.size()),
        requests(2 * others.size() + 1, MPI_REQUEST_NULL),
        statuses(requests.size()),
        done(requests.size()),
        arrived(others.size(), 0),
        outgoing(std::make_shared<Round>()) {}

  /// requests = [ARRIVED receive from others[i]]... [GAVE_UP receive] [ARRIVED send to others[i]]...
  [[nodiscard]] std::size_t count() const noexcept { return others.size(); }
  [[nodiscard]] std::size_t gave_up_index() const noexcept { return others.size(); }
  [[nodiscard]] std::size_t send_index(std::size_t i) const noexcept { return others.size() + 1 + i; }
  MPI_Request& gave_up_request() noexcept { return requests[gave_up_index()]; }

  std::vector<int> others;          ///< the members but this instance, sorted
  std::vector<Round> incoming;      ///< ARRIVED payloads, by peer
  Round gave_up_notice;             ///< the GAVE_UP payload (MPI_ANY_SOURCE)
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses;  ///< for MPI_Testsome: the GAVE_UP receive needs its source
  std::vector<int> done;             ///< MPI_Testsome's indices
  std::vector<char> arrived;         ///< by peer, this round (char, not the bit-packed vector<bool>)
  /// This round's ARRIVED payload. Shared: a send still in flight at the end of its round is
  /// handed to PendingSends with a reference to it, and the next round then writes a new one.
  std::shared_ptr<Round> outgoing;
  /// When this instance started its previous timed round over the set (step 5's bound).
  std::chrono::steady_clock::time_point previous_start;
  bool has_previous_round = false;
};

}  // namespace popdist::detail
