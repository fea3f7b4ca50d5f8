#pragma once
// How a failed call runs its roll call (roll_call.hpp) on MPI's clock, the same for the timed
// synchronize (timed_failure.cpp) and registration's handshake (handshake.cpp): every member
// stays roll_call_length, answering those that still ask, and settles after roll_call_settle.
// Apart from roll_call.hpp so that the roll call itself stays pure logic, without MPI.

#include <chrono>
#include <cstddef>

#include "mpi/clock.hpp"
#include "protocols/timed/roll_call.hpp"

namespace popdist::detail {

/// How often a roll call polls at first (less often as it goes on: pause_between_polls).
inline constexpr auto kRollCallPoll = std::chrono::microseconds(200);

/// Runs `call`, started at `start` by a call with timeout `seconds` over `members` members, for
/// roll_call_length: between polls `take(elapsed)` hands it the messages that came, `elapsed`
/// being the seconds since `start` (the time RollCall counts in).
template <class Take>
void drive_roll_call(RollCall& call, MpiClock::time_point start, double seconds, std::size_t members, Take&& take) {
  const auto elapsed = [start] { return std::chrono::duration<double>(MpiClock::now() - start).count(); };
  const auto settle_at = start + seconds_on_mpi_clock(roll_call_settle(seconds, members));
  const auto until = start + seconds_on_mpi_clock(roll_call_length(seconds, members));
  while (MpiClock::now() < until) {
    if (!call.done() && MpiClock::now() >= settle_at) call.settle(elapsed());  // once: it ends in a window
    take(elapsed());
    call.poll(elapsed());
    pause_between_polls(MpiClock::now() - start, {}, {}, kRollCallPoll);
  }
}

}  // namespace popdist::detail
