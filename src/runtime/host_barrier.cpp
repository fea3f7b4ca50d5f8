#include "runtime/host_barrier.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include <memory>
#include <new>

#include "popdist/error.hpp"
#include "runtime/mpi_call.hpp"

namespace popdist::detail {
namespace {

/// Polls (each a pause instruction, ~40-150 cycles) before the first yield: a barrier between
/// running processes completes in well under a microsecond; longer than that, the awaited process
/// is probably not running (oversubscribed), and spinning would only burn its time slice.
constexpr int kSpinPolls = 128;
/// Yields before sleeping in the kernel: cheap when the awaited process is runnable on the core.
constexpr int kYieldPolls = 8;

/// A futex on a word of the shared window (not FUTEX_PRIVATE: the word is shared between
/// processes). Waits while *word == expected, at most 10 ms (a safety net; wakes are explicit).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  timespec limit{0, 10'000'000};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &limit, nullptr, 0);
}
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Set in a child of fork(): the shared mapping survives, the membership in the job does not.
std::atomic<bool> g_forked_child{false};

void mark_forked_child() noexcept { g_forked_child.store(true, std::memory_order_relaxed); }

}  // namespace

HostBarrier::HostBarrier(MPI_Comm world, int world_rank) {
  static const int registered = pthread_atfork(nullptr, nullptr, mark_forked_child);
  (void)registered;
  MpiLock lock;
  check_mpi(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &shared_comm_),
            "MPI_Comm_split_type");
  check_mpi(MPI_Comm_set_errhandler(shared_comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(shared_comm_, &local_rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(shared_comm_, &local_count_), "MPI_Comm_size");
  // The leader (local rank 0) allocates the shared words; the others map them.
  void* base = nullptr;
  // MPI only promises the window's base the alignment of its displacement unit: room for moving
  // the words up to their 64-byte (cache line) alignment.
  const MPI_Aint bytes = local_rank_ == 0 ? static_cast<MPI_Aint>(sizeof(Shared) + alignof(Shared) - 1) : 0;
  check_mpi(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, shared_comm_, &base, &window_),
            "MPI_Win_allocate_shared");
  MPI_Aint size = 0;
  int unit = 0;
  check_mpi(MPI_Win_shared_query(window_, 0, &size, &unit, &base), "MPI_Win_shared_query");
  // The leader places the words at the first aligned address of its mapping; the others may map
  // the window elsewhere, so they take the leader's offset (broadcast below), not their own.
  int offset = 0;
  if (local_rank_ == 0) {
    void* aligned = base;
    std::size_t room = static_cast<std::size_t>(bytes);
    if (std::align(alignof(Shared), sizeof(Shared), aligned, room) == nullptr) {
      check_mpi(MPI_ERR_NO_MEM, "MPI_Win_allocate_shared (no room to align the shared words)");
    }
    offset = static_cast<int>(static_cast<char*>(aligned) - static_cast<char*>(base));
    shared_ = new (aligned) Shared{};
    shared_->arrived.store(0, std::memory_order_relaxed);
    shared_->generation.store(0, std::memory_order_relaxed);
    shared_->sleepers.store(0, std::memory_order_relaxed);
  }
  check_mpi(MPI_Comm_split(world, local_rank_ == 0 ? 0 : MPI_UNDEFINED, world_rank, &leaders_), "MPI_Comm_split");
  if (leaders_ != MPI_COMM_NULL) {
    check_mpi(MPI_Comm_set_errhandler(leaders_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_size(leaders_, &leaders_size_), "MPI_Comm_size");
  }
  // Every instance learns whether the job spans hosts (non-leaders do not hold the communicator),
  // and nobody touches the words before the leader has constructed them.
  int from_leader[2] = {leaders_size_, offset};
  check_mpi(MPI_Bcast(from_leader, 2, MPI_INT, 0, shared_comm_), "MPI_Bcast");
  leaders_size_ = from_leader[0];
  if (local_rank_ != 0) shared_ = reinterpret_cast<Shared*>(static_cast<char*>(base) + from_leader[1]);
}

HostBarrier::~HostBarrier() {
  if (!mpi_is_usable()) return;
  MpiLock lock;
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  if (leaders_ != MPI_COMM_NULL) MPI_Comm_free(&leaders_);
  if (shared_comm_ != MPI_COMM_NULL) MPI_Comm_free(&shared_comm_);
}

void HostBarrier::wait_for_generation(std::uint32_t seen) const noexcept {
  for (int poll = 0; shared_->generation.load(std::memory_order_acquire) == seen; ++poll) {
    if (poll < kSpinPolls) {
      cpu_relax();
    } else if (poll < kSpinPolls + kYieldPolls) {
      sched_yield();
    } else {
      // Announce the sleep, then look again (sequentially consistent on both sides: either the
      // releaser sees the sleeper and wakes it, or this sees the new generation), then sleep
      // unless the generation has moved (the kernel checks that atomically).
      shared_->sleepers.fetch_add(1, std::memory_order_seq_cst);
      if (shared_->generation.load(std::memory_order_seq_cst) == seen) futex_wait(shared_->generation, seen);
      shared_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
  }
}

void HostBarrier::release(std::uint32_t next) const noexcept {
  shared_->generation.store(next, std::memory_order_seq_cst);
  if (shared_->sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(shared_->generation);
}

void HostBarrier::wait_for_arrivals() const noexcept {
  const auto others = static_cast<std::uint32_t>(local_count_ - 1);
  for (int poll = 0; shared_->arrived.load(std::memory_order_acquire) != others; ++poll) {
    if (poll < kSpinPolls) {
      cpu_relax();
    } else if (poll < kSpinPolls + kYieldPolls) {
      sched_yield();
    } else {
      // The host's others are not running: give them the core (their arrival needs no wake).
      timespec pause{0, 20'000};
      nanosleep(&pause, nullptr);
    }
  }
}

void HostBarrier::wait() {
  if (g_forked_child.load(std::memory_order_relaxed)) {
    throw UsageError("synchronize: this process is a fork() child of a popdist instance; it is not a member of the "
                     "job and cannot synchronize with it");
  }
  const auto seen = shared_->generation.load(std::memory_order_acquire);
  if (leaders_size_ == 1) {
    // One host: the last to arrive resets the counter and releases everyone (sense reversal by
    // generation: the reset happens before the release, so an early re-entry counts afresh).
    if (shared_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(local_count_)) {
      shared_->arrived.store(0, std::memory_order_relaxed);
      release(seen + 1);
    } else {
      wait_for_generation(seen);
    }
    return;
  }
  // Several hosts: the leader waits for its host, meets the other leaders, then releases.
  if (local_rank_ != 0) {
    shared_->arrived.fetch_add(1, std::memory_order_acq_rel);
    wait_for_generation(seen);
    return;
  }
  wait_for_arrivals();
  shared_->arrived.store(0, std::memory_order_relaxed);
  {
    MpiLock lock;
    check_mpi(MPI_Barrier(leaders_), "MPI_Barrier");
  }
  release(seen + 1);
}

}  // namespace popdist::detail
