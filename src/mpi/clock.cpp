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
  // back to the simulator never sees the others arrive. Sleeping in simulated time does, and so
  // does the poll itself when it costs simulated time (an unsuccessful MPI_Test or MPI_Iprobe
  // sleeps for smpi/test or smpi/iprobe): while the wait is short, that cost is the only pause,
  // so a poll sees a message at most one MPI_Test after it came, as a real spinning poll would.
  // A pause is added only when the poll cost no simulated time (those settings at 0: the wait
  // must still hand control back) and once the wait is long (1/64 of the time waited, up to the
  // real back-off's sleep: a wait of seconds polls a thousand times, not a million).
  static MpiClock::time_point last_poll;  // per simulated rank: smpirun privatizes globals
  const auto now = MpiClock::now();
  const bool poll_took_time = now != last_poll;
  auto pause = waited < yield ? std::min(waited / 64, sleep) : sleep;
  if (poll_took_time && waited < spin) pause = MpiClock::duration::zero();
  if (!poll_took_time) pause = std::max(pause, MpiClock::duration(std::chrono::microseconds(1)));
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(pause).count();
  if (micros > 0) usleep(static_cast<useconds_t>(micros));
  last_poll = MpiClock::now();
#else
  if (waited >= yield) {
    std::this_thread::sleep_for(sleep);
  } else if (waited >= spin) {
    std::this_thread::yield();
  }
#endif
}

}  // namespace popdist::detail
