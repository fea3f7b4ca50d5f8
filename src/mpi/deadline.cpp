#include "mpi/deadline.hpp"

#include <algorithm>

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

bool wait_all(std::vector<MPI_Request>& requests, const Deadline& deadline, const char* function) {
  const auto count = static_cast<int>(requests.size());
  if (!deadline.bounded()) {
    MpiLock lock;
    check_mpi(MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE), function);
    return true;
  }
  const auto start = Deadline::Clock::now();
  for (;;) {
    int done = 0;
    {
      MpiLock lock;
      check_mpi(MPI_Testall(count, requests.data(), &done, MPI_STATUSES_IGNORE), function);
    }
    if (done != 0) return true;
    if (deadline.passed()) return false;
    pause_between_polls(Deadline::Clock::now() - start, kSpinFor, kYieldFor, kSleepBetweenPolls);
  }
}

}  // namespace popdist::detail
