#pragma once
// The host-aware barrier behind an untimed synchronize() over all instances (design.md §5.6,
// "Scale"): inside a host the instances meet in a shared-memory segment (no message at all);
// across hosts only the hosts' leaders meet, in an MPI_Barrier over a communicator of leaders.
// Waiting spins, yields, then sleeps on a futex, so that it stays fast when instances outnumber
// cores. On one host it also has a timed form (wait_until), whose "gave up" bit makes every
// instance agree on whether the round was met. A fork() child refuses it (runtime/fork_guard.hpp).
// Why each of these: docs/guide/protocols.md, "The host barrier".

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "protocols/host_barrier/shared_segment.hpp"

namespace popdist::detail {

class HostBarrier {
 public:
  /// Collective over `world` (every instance): maps a segment on each host and the
  /// leaders' communicator. `shared` is world split by shared memory with the world rank as key
  /// (the runtime's host split, made by init()); the barrier uses it only while it is built, and
  /// the runtime frees it. Throws MpiError.
  HostBarrier(MPI_Comm world, int world_rank, MPI_Comm shared);
  /// Unmaps the segment, frees the leaders' communicator (finalize); never throws.
  ~HostBarrier();
  HostBarrier(const HostBarrier&) = delete;
  HostBarrier& operator=(const HostBarrier&) = delete;

  /// Returns once every instance of the job has called it. Throws UsageError when the host's
  /// barrier was abandoned by a timed-out wait_until (the members are out of step).
  void wait();

  /// How a timed wait ended.
  struct TimedOutcome {
    enum Kind { Met, TimedOut, OtherGaveUp, Late } kind = Met;
    std::vector<int> missing;  ///< TimedOut, OtherGaveUp: the instances (world ranks) not counted
    int gave_up_by = -1;       ///< OtherGaveUp, Late: the instance whose deadline ended the round
  };
  /// wait() bounded by `deadline`; one host only (!spans_hosts()). TimedOut: this instance's
  /// deadline ended the round; OtherGaveUp: another's did while this one waited; Late: the round
  /// had ended before this instance arrived. A round that ends so abandons the barrier for good.
  TimedOutcome wait_until(std::chrono::steady_clock::time_point deadline);

  // The timed form across hosts (timed_hosts.cpp drives it; its top says how): the host's part
  // of a round in steps, the same counter and slots as wait_until, with the leaders meeting over
  // MPI in between. Only with the window (uses_window()).

  /// This instance leads its host (the leaders meet over `leaders()`, MPI_COMM_NULL elsewhere).
  [[nodiscard]] bool leads() const noexcept { return local_rank_ == 0; }
  [[nodiscard]] MPI_Comm leaders() const noexcept { return leaders_; }
  [[nodiscard]] int leaders_size() const noexcept { return leaders_size_; }
  [[nodiscard]] bool uses_window() const noexcept { return fallback_ == MPI_COMM_NULL; }
  /// Arrives (counts this instance in the host's round): the round, and whether the host had
  /// given it up before this instance came.
  struct Arrival {
    std::uint32_t round = 0;
    bool late = false;
  };
  Arrival arrive_across() noexcept;
  /// Where the round stands here: still waiting for instances of this host, every instance of
  /// the host counted (the leader may meet the others), released (met), or given up.
  enum class Across { Waiting, HostArrived, Released, GivenUp };
  [[nodiscard]] Across state_across(std::uint32_t round) const noexcept;
  /// The leader, once the leaders met: releases the host; false when an instance of the host
  /// gave the round up first.
  bool finish_across(std::uint32_t round) noexcept;
  /// Gives the round up for the host (wakes the sleepers) unless it was released: false then.
  bool give_up_across(std::uint32_t round) noexcept;
  /// One pause of a non-leader's wait: spins, then yields, then sleeps on the release at most
  /// `longest` (a release or a give-up wakes it at once); `poll` counts the pauses of this wait.
  void pause_across(std::uint32_t round, int poll, std::chrono::nanoseconds longest) const noexcept;
  /// After the round was given up: who gave it up, and the instances of this host not counted.
  [[nodiscard]] TimedOutcome failure_across(std::uint32_t round, bool late) const;

  /// The layout it found (for tests and logs).
  [[nodiscard]] int local_count() const noexcept { return local_count_; }
  /// True across hosts, and when the shared memory was not usable (then the barrier is
  /// MPI_Barrier, and a timed synchronize takes the protocol for several hosts).
  [[nodiscard]] bool spans_hosts() const noexcept { return leaders_size_ > 1 || fallback_ != MPI_COMM_NULL; }

 private:
  /// The words shared inside a host, each on its own cache line so that arrivals (the counter)
  /// and the release (the generation) do not contend.
  /// `state` is the round's number (high 32 bits), a bit saying that a timed wait gave up on
  /// the round (then for good), and the round's arrivals (low 31 bits), in one word so that a
  /// compare-and-swap can never take one round for another. `generation` repeats the round's
  /// number for the futex (a 32-bit word) that released instances sleep on. The instances' slots
  /// follow the struct in the segment.
  struct alignas(64) Shared {
    alignas(64) std::atomic<std::uint64_t> state;
    alignas(64) std::atomic<std::uint32_t> generation;
    std::atomic<std::uint32_t> sleepers;  ///< waiters blocked in the kernel on `generation`
    std::atomic<std::uint32_t> gave_up_by;  ///< 1 + the local rank whose deadline ended a round
  };
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "shared-memory atomics must be lock-free");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");
  static constexpr std::uint64_t kGaveUp = std::uint64_t{1} << 31;
  static constexpr std::uint64_t kCountMask = kGaveUp - 1;
  static constexpr std::uint32_t round_of(std::uint64_t state) noexcept { return static_cast<std::uint32_t>(state >> 32); }
  static constexpr std::uint64_t count_of(std::uint64_t state) noexcept { return state & kCountMask; }

  /// Collective over `world`: maps the host's segment and returns true when every instance did;
  /// otherwise unmaps it, makes `fallback_` and logs a warning naming this instance's failure.
  bool map_shared_words(MPI_Comm world, MPI_Comm shared);
  void wait_for_generation(std::uint32_t seen) const;  ///< may throw: the interrupt check
  /// One pause of a wait for the release of `round`: spins, yields, then sleeps at most
  /// `longest_ns` (and, when `until_given_up`, not once the round was given up).
  void pause(std::uint32_t round, int poll, long longest_ns, bool until_given_up) const noexcept;
  void release(std::uint32_t next) const noexcept;
  /// The leader's wait for the host's other instances; returns the round.
  std::uint32_t wait_for_arrivals() const;  ///< may throw: the interrupt check
  /// Ends round `round`: the next round starts with no arrival, then everyone is released.
  void finish_round(std::uint32_t round) const noexcept;
  /// Arrives (timed): marks the slot, counts; the state before.
  std::uint64_t arrive_timed() noexcept;
  /// After the round `round` was given up: the instances not counted in it, and who gave up.
  TimedOutcome outcome_of_failure(TimedOutcome::Kind kind, std::uint32_t round) const;
  [[nodiscard]] int gave_up_by() const noexcept;
  [[nodiscard]] std::atomic<std::uint64_t>& slot(int local_rank) const noexcept { return slots_[local_rank]; }

  MPI_Comm leaders_ = MPI_COMM_NULL;  ///< MPI_COMM_NULL on non-leaders
  SharedSegment segment_;  ///< the host's words: unmapped after the communicators are freed
  /// A duplicate of the world when the segment was not usable everywhere: wait() is MPI_Barrier on it.
  MPI_Comm fallback_ = MPI_COMM_NULL;
  Shared* shared_ = nullptr;
  /// By local rank: (round << 2) | state (pending, counted, late), for naming the missing.
  std::atomic<std::uint64_t>* slots_ = nullptr;
  std::vector<int> world_rank_of_;  ///< by local rank
  int spin_polls_ = 0;   ///< polls before yielding, then yields before sleeping: see host_barrier.cpp
  int yield_polls_ = 0;
  int local_rank_ = 0;
  int local_count_ = 1;
  int leaders_size_ = 1;
};

}  // namespace popdist::detail
