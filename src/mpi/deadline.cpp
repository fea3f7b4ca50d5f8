#include "mpi/deadline.hpp"

#include <algorithm>

#include "mpi/interrupts.hpp"
#include "mpi/mpi_call.hpp"

namespace popdist::detail {
namespace {

// The same back-off as the timed synchronize: peers that are running complete a step within
// microseconds; after that, yield so oversubscribed peers get the core; after that, sleep so a
// long wait does not burn one.
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::milliseconds(10);
constexpr auto kSleepBetweenPolls = std::chrono::microseconds(100);

}  // namespace

Deadline Deadline::after(std::optional<double> seconds) {
  Deadline deadline;
  if (!seconds) return deadline;
  deadline.seconds_ = seconds;
  deadline.at_ = Clock::now() + seconds_on_mpi_clock(*seconds);
  return deadline;
}

bool wait_all(MPI_Request* requests, int count, const Deadline& deadline, const char* function) {
  if (!deadline.bounded() && !interrupt_check_installed()) {
    MpiLock lock;
    check_mpi(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE), function);
    return true;
  }
  const auto start = Deadline::Clock::now();
  InterruptPoll interrupts;
  for (;;) {
    int done = 0;
    {
      MpiLock lock;
      check_mpi(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), function);
    }
    if (done != 0) return true;
    if (deadline.passed()) return false;
    const auto waited = Deadline::Clock::now() - start;
    pause_between_polls(waited, kSpinFor, kYieldFor, kSleepBetweenPolls);
    // Signals are looked at once the wait sleeps between polls (every 50 ms at most: interrupts.hpp).
    if (waited >= kYieldFor) interrupts();
  }
}

void interruptible_barrier(MPI_Comm comm, const char* function) {
  if (!interrupt_check_installed()) {
    MpiLock lock;
    check_mpi(MPI_Barrier(comm), function);
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  {
    MpiLock lock;
    check_mpi(MPI_Ibarrier(comm, &request), function);
  }
  (void)wait_all(&request, 1, Deadline(), function);
}

}  // namespace popdist::detail
