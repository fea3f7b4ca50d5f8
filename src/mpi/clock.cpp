#include "mpi/clock.hpp"

#include <algorithm>
#include <thread>

#include <unistd.h>  // usleep: under smpicxx a macro for smpi_usleep, a sleep in simulated time

namespace popdist::detail {

void pause_between_polls(MpiClock::duration waited, MpiClock::duration spin, MpiClock::duration yield,
                         MpiClock::duration sleep) {
  // A long wait polls less often: at most 1/64 of the time waited so far (and at most 1 ms) is
  // added to when the wait is seen to end, and a member waiting seconds for a late peer polls a
  // thousand times instead of ten thousand (each poll a context switch in a simulation).
  if (waited >= yield) sleep = std::clamp(waited / 64, sleep, MpiClock::duration(std::chrono::milliseconds(1)));
#if defined(POPDIST_SIMULATED_MPI)
  // Every simulated rank runs in this one OS thread, in turn: a rank that does not give control
  // back to the simulator never sees the others arrive. Sleeping in simulated time does.
  // Spinning costs a context switch per poll there and models nothing real: from the start, the
  // pause grows with the time waited (1/64 of it, from 1 us up to the real back-off's sleep).
  const auto pause = std::chrono::duration_cast<std::chrono::microseconds>(
      waited < yield ? std::clamp(waited / 64, MpiClock::duration(std::chrono::microseconds(1)), sleep) : sleep);
  usleep(static_cast<useconds_t>(pause.count()));
  (void)spin;
#else
  if (waited >= yield) {
    std::this_thread::sleep_for(sleep);
  } else if (waited >= spin) {
    std::this_thread::yield();
  }
#endif
}

}  // namespace popdist::detail
