#pragma once
// A deadline for a blocking protocol step (POPDIST_SYNC_TIMEOUT or an explicit timeout), and
// the one polling wait on MPI requests that honours it (design.md §5.3).

#include <mpi.h>

#include <chrono>

#include "mpi/clock.hpp"
#include <optional>
#include <vector>

namespace popdist::detail {

class Deadline {
 public:
  using Clock = MpiClock;  // MPI's clock: simulated time under SMPI (mpi/clock.hpp)
  /// No deadline: waits are plain MPI waits.
  Deadline() = default;
  /// `seconds` from now (bounded to ~30 years so the clock arithmetic cannot overflow); none
  /// when `seconds` is empty.
  static Deadline after(std::optional<double> seconds);

  [[nodiscard]] bool bounded() const noexcept { return seconds_.has_value(); }
  [[nodiscard]] double seconds() const noexcept { return seconds_.value_or(0); }
  [[nodiscard]] bool passed() const noexcept { return bounded() && Clock::now() >= at_; }

 private:
  std::optional<double> seconds_;
  Clock::time_point at_{};
};

/// Waits for every request to complete. Unbounded and no interrupt check installed: MPI_Waitall.
/// Otherwise polls MPI_Testall (spin, then yield, then sleep between polls, so that an
/// oversubscribed machine still runs the processes we wait for; the interrupt check every 50 ms
/// while sleeping, which may throw) and returns false once the deadline passes with requests
/// still outstanding (they stay active: the caller decides what becomes of them).
[[nodiscard]] bool wait_all(MPI_Request* requests, int count, const Deadline& deadline, const char* function);
[[nodiscard]] inline bool wait_all(std::vector<MPI_Request>& requests, const Deadline& deadline, const char* function) {
  return wait_all(requests.data(), static_cast<int>(requests.size()), deadline, function);
}

/// MPI_Barrier over `comm`; with an interrupt check installed (Python), MPI_Ibarrier polled as
/// wait_all does, so that Ctrl-C is noticed while the others have not come.
void interruptible_barrier(MPI_Comm comm, const char* function);

}  // namespace popdist::detail
