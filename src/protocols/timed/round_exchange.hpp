#pragma once
// One round's exchange of ARRIVED messages over recursive-doubling steps (timed_rounds.hpp),
// shared by the timed barrier over a set's members (timed_barrier.cpp) and the round among the
// hosts' leaders (timed_hosts.cpp): every step's receive posted at once, each step sent once the
// steps before it are in, and one request tested per poll, the lowest step not in. What a
// received message means stays with the caller (its `accept`).

#include <mpi.h>

#include <cstddef>

#include "protocols/timed/timed_rounds.hpp"

namespace popdist::detail {

class RoundExchange {
 public:
  /// A round on `rounds` over `comm` with `tag`. A send of the previous round still in flight
  /// reads the old buffers: the round writes new ones. Steps without a receive are in already.
  RoundExchange(TimedRounds& rounds, MPI_Comm comm, int tag);

  /// Posts every step's receive.
  void listen();
  /// Posts step `step`'s receive again (another set's message, on a colliding tag, took it).
  void post_receive(std::size_t step);
  /// Sends `payload` at every step whose predecessors are all in (step 0 at once).
  void send_ready(const Round& payload);
  /// Counts step `step` in.
  void count_in(std::size_t step) noexcept {
    rounds_.received[step] = 1;
    --remaining_;
  }
  /// Takes the lowest step not in yet, and the steps after it whose receive completed (testing a
  /// completed receive does not wait): `accept(step)` counts each in, or posts it again, and it
  /// is then tested again at once.
  template <class Accept>
  void take_arrivals(Accept&& accept) {
    while (lowest_ < rounds_.steps) {
      if (rounds_.received[lowest_] == 0) {
        if (!completed(lowest_)) break;
        accept(lowest_);
        if (rounds_.received[lowest_] == 0) continue;
      }
      ++lowest_;
    }
  }
  /// The steps whose ARRIVED has not been counted in.
  [[nodiscard]] std::size_t remaining() const noexcept { return remaining_; }

 private:
  [[nodiscard]] bool completed(std::size_t step);

  TimedRounds& rounds_;
  MPI_Comm comm_;
  int tag_;
  std::size_t remaining_;
  std::size_t next_send_ = 0;  ///< the next step to send
  std::size_t lowest_ = 0;     ///< every step below it is in
};

}  // namespace popdist::detail
