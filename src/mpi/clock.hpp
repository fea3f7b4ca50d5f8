#pragma once
// One clock for every deadline, escalation and back-off of popdist's protocols: MPI's own
// (MPI_Wtime). Under a launcher it is a monotonic wall clock like std::chrono::steady_clock;
// under SimGrid SMPI it is the simulated time of this rank, which a wall clock is not (a
// simulation of 16,384 ranks runs them one after another: a deadline on the wall clock fires
// for reasons that have nothing to do with the simulated job). design.md §11.9.
//
// And one way to wait between two polls of MPI (pause_between_polls), for the same reason: a
// real process yields or sleeps in the kernel so that oversubscribed peers get the core; a
// simulated rank must hand control back to the simulator (SMPI's sleep), or the ranks it waits
// for never run and its own clock never moves.

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdint>

namespace popdist::detail {

/// A std::chrono clock over MPI_Wtime (callable before MPI_Init and after MPI_Finalize, as the
/// MPI standard allows for MPI_Wtime).
struct MpiClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<MpiClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept { return time_point(duration(static_cast<rep>(std::llround(MPI_Wtime() * 1e9)))); }
};

/// `seconds` as the clock's duration (bounded to ~30 years so that adding it cannot overflow).
inline MpiClock::duration seconds_on_mpi_clock(double seconds) {
  return std::chrono::duration_cast<MpiClock::duration>(std::chrono::duration<double>(std::fmin(seconds, 1e9)));
}

/// The back-off of every polling wait, by how long the caller has waited so far: nothing for
/// the first `spin` (a running peer answers within microseconds), then a yield until `yield`,
/// then a sleep of `sleep` per poll (a long wait must not burn a core), growing to 1/64 of the
/// time waited (at most 1 ms) in long waits. Under SMPI each step is a
/// simulated sleep instead (1 us while spinning), which lets the other simulated ranks run.
void pause_between_polls(MpiClock::duration waited, MpiClock::duration spin, MpiClock::duration yield,
                         MpiClock::duration sleep);

}  // namespace popdist::detail
