#pragma once
// The host-aware barrier behind an untimed synchronize() over all instances (DESIGN.md 5,
// "Scale"): inside a host the instances meet in an MPI-3 shared-memory window (one counter and
// one generation word, no message at all); across hosts only the hosts' leaders (the lowest
// instance of each) meet, in an MPI_Barrier over a communicator of leaders. On one host that is
// a fraction of MPI_Barrier's cost; across hosts about MPI_Barrier over the leaders.
//
// Waiting spins briefly (a barrier between running processes completes within microseconds),
// then yields a few times, then sleeps in the kernel on the generation word (a futex on the
// shared mapping, woken by the releaser), so that it stays correct and fast when instances
// outnumber cores: a waiter that is not running cannot steal time from the one it waits for.
// Fork safety: a child process inherits the shared mapping but is not a member of the job; a
// fork handler marks the child, and the barrier refuses to run there.

#include <mpi.h>

#include <atomic>
#include <cstdint>

namespace popdist::detail {

class HostBarrier {
 public:
  /// Collective over `world` (every instance): splits it by shared memory, allocates the window
  /// on each host and the leaders' communicator. Throws MpiError.
  HostBarrier(MPI_Comm world, int world_rank);
  /// Frees the window and the communicators (finalize); never throws.
  ~HostBarrier();
  HostBarrier(const HostBarrier&) = delete;
  HostBarrier& operator=(const HostBarrier&) = delete;

  /// Returns once every instance of the job has called it.
  void wait();

  /// The layout it found (for tests and logs).
  [[nodiscard]] int local_count() const noexcept { return local_count_; }
  [[nodiscard]] bool spans_hosts() const noexcept { return leaders_size_ > 1; }

 private:
  /// The words shared inside a host, each on its own cache line so that arrivals (the counter)
  /// and the release (the generation) do not contend.
  struct alignas(64) Shared {
    alignas(64) std::atomic<std::uint32_t> arrived;
    alignas(64) std::atomic<std::uint32_t> generation;
    std::atomic<std::uint32_t> sleepers;  ///< waiters blocked in the kernel on `generation`
  };
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "shared-memory atomics must be lock-free");

  void wait_for_generation(std::uint32_t seen) const noexcept;
  void release(std::uint32_t next) const noexcept;
  void wait_for_arrivals() const noexcept;

  MPI_Comm shared_comm_ = MPI_COMM_NULL;
  MPI_Comm leaders_ = MPI_COMM_NULL;  ///< MPI_COMM_NULL on non-leaders
  MPI_Win window_ = MPI_WIN_NULL;
  Shared* shared_ = nullptr;
  int local_rank_ = 0;
  int local_count_ = 1;
  int leaders_size_ = 1;
};

}  // namespace popdist::detail
