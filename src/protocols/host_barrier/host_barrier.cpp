#include "protocols/host_barrier/host_barrier.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <ctime>

#include <algorithm>
#include <chrono>
#include <new>
#include <vector>

#include "core/log.hpp"
#include "mpi/deadline.hpp"
#include "mpi/interrupts.hpp"
#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "runtime/fork_guard.hpp"

namespace popdist::detail {
namespace {

/// Polls (each a pause instruction, a few dozen cycles) before the first yield: a barrier between
/// running processes completes in well under a microsecond; longer than that, the awaited process
/// is probably not running, and spinning would only burn its time slice.
constexpr int kSpinPolls = 128;
/// Yields before sleeping in the kernel: cheap when the awaited process is runnable on the core.
constexpr int kYieldPolls = 8;
/// When the host's instances outnumber its cores, the awaited process is usually not running:
/// no spin at all, and many yields before sleeping (a yield hands the core to a runnable
/// instance at once; a sleep needs the releaser's wake and the scheduler's), while spinning would
/// keep the core from the very instance we wait for (tests/bench/README.md compares the two).
constexpr int kOversubscribedYieldPolls = 64;

/// The cores this process may run on.
int usable_cores() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

/// The longest one sleep on the release lasts: a safety net, wakes are explicit.
constexpr long kLongestSleepNs = 10'000'000;

/// A futex on a word of the shared segment (not FUTEX_PRIVATE: the word is shared between
/// processes). Waits while *word == expected, at most `nanoseconds`.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, long nanoseconds) noexcept {
  timespec limit{0, nanoseconds};
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

/// A slot's states (its low two bits; the round is above them).
constexpr std::uint64_t kPending = 1;  ///< arriving: counted or late in an instant
constexpr std::uint64_t kCounted = 2;
constexpr std::uint64_t kLate = 3;
constexpr std::uint64_t slot_value(std::uint32_t round, std::uint64_t state) noexcept {
  return (static_cast<std::uint64_t>(round) << 2) | state;
}
/// How long a reader waits for a pending slot or for the name of the one that gave up: those are
/// written by a process in the middle of two stores, so this is only a safety net against one
/// that was descheduled (or killed) there.
constexpr auto kSettleFor = std::chrono::milliseconds(200);

}  // namespace

HostBarrier::HostBarrier(MPI_Comm world, int world_rank, MPI_Comm shared) {
  // A fork() child inherits the shared mapping but not the membership in the job: the one fork
  // guard (runtime/fork_guard.hpp) marks it, and the waits below refuse there.
  install_fork_guard();
  MpiLock lock;
  check_mpi(MPI_Comm_set_errhandler(shared, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(shared, &local_rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(shared, &local_count_), "MPI_Comm_size");
  const bool oversubscribed = local_count_ > usable_cores();
  spin_polls_ = oversubscribed ? 0 : kSpinPolls;
  yield_polls_ = oversubscribed ? kOversubscribedYieldPolls : kYieldPolls;
  if (!map_shared_words(world, shared)) return;  // MPI_Barrier instead
  if (local_rank_ == 0) {
    // A fresh segment is zero-filled; the constructors make the atomics' lifetimes start.
    shared_ = new (segment_.base()) Shared{};
    shared_->state.store(0, std::memory_order_relaxed);
    shared_->generation.store(0, std::memory_order_relaxed);
    shared_->sleepers.store(0, std::memory_order_relaxed);
    shared_->gave_up_by.store(0, std::memory_order_relaxed);
    auto* slots = reinterpret_cast<std::atomic<std::uint64_t>*>(reinterpret_cast<char*>(shared_) + sizeof(Shared));
    for (int i = 0; i < local_count_; ++i) new (slots + i) std::atomic<std::uint64_t>(0);
  }
  check_mpi(MPI_Comm_split(world, local_rank_ == 0 ? 0 : MPI_UNDEFINED, world_rank, &leaders_), "MPI_Comm_split");
  if (leaders_ != MPI_COMM_NULL) {
    check_mpi(MPI_Comm_set_errhandler(leaders_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_size(leaders_, &leaders_size_), "MPI_Comm_size");
  }
  // Every instance learns whether the job spans hosts (non-leaders do not hold the communicator),
  // and nobody touches the words before the leader has constructed them.
  check_mpi(MPI_Bcast(&leaders_size_, 1, MPI_INT, 0, shared), "MPI_Bcast");
  if (local_rank_ != 0) shared_ = static_cast<Shared*>(segment_.base());
  slots_ = reinterpret_cast<std::atomic<std::uint64_t>*>(reinterpret_cast<char*>(shared_) + sizeof(Shared));
  // The instances of the host by local rank, for naming the ones a timed wait misses.
  MPI_Group shared_group = MPI_GROUP_NULL;
  MPI_Group world_group = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(shared, &shared_group), "MPI_Comm_group");
  check_mpi(MPI_Comm_group(world, &world_group), "MPI_Comm_group");
  std::vector<int> local_ranks(static_cast<std::size_t>(local_count_));
  for (int i = 0; i < local_count_; ++i) local_ranks[static_cast<std::size_t>(i)] = i;
  world_rank_of_.resize(local_ranks.size());
  const int code =
      MPI_Group_translate_ranks(shared_group, local_count_, local_ranks.data(), world_group, world_rank_of_.data());
  MPI_Group_free(&shared_group);
  MPI_Group_free(&world_group);
  check_mpi(code, "MPI_Group_translate_ranks");
}

bool HostBarrier::map_shared_words(MPI_Comm world, MPI_Comm shared) {
  // The leader creates the segment, the others map it by name. Each step that can fail (a full
  // /dev/shm, a missing /dev/shm, a name that vanished under load) is one process's system call,
  // and both collectives below are reached by every instance whatever happened before them, so
  // that the instances agree on the words or on MPI_Barrier and never wait in different calls.
  const auto bytes = sizeof(Shared) + static_cast<std::size_t>(local_count_) * sizeof(std::atomic<std::uint64_t>);
  struct {
    int created = 0;
    char name[SharedSegment::kNameSize] = "";
  } made;
  std::string failed;
  if (local_rank_ == 0) {
    failed = segment_.create(bytes);
    made.created = failed.empty() ? 1 : 0;
    std::memcpy(made.name, segment_.name(), sizeof made.name);  // NUL-terminated inside
  }
  check_mpi(MPI_Bcast(&made, sizeof made, MPI_BYTE, 0, shared), "MPI_Bcast");
  if (local_rank_ != 0) {
    failed = made.created != 0 ? segment_.open(made.name, bytes) : "not made by this host's leader";
  }
  int usable = failed.empty() ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, world), "MPI_Allreduce");
  segment_.unlink();  // every instance of the host has mapped it or given up: nothing left in /dev/shm
  if (usable == 1) return true;
  segment_.release();
  check_mpi(MPI_Comm_dup(world, &fallback_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(fallback_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  logger().warn("synchronize: the shared memory of the host barrier is not usable on every instance (this one: {}); "
                "synchronize() over all instances uses MPI_Barrier instead",
                failed.empty() ? std::string("usable") : failed);
  return false;
}

HostBarrier::~HostBarrier() {
  if (!mpi_is_usable()) return;
  MpiLock lock;
  if (fallback_ != MPI_COMM_NULL) MPI_Comm_free(&fallback_);
  if (leaders_ != MPI_COMM_NULL) MPI_Comm_free(&leaders_);
}

void HostBarrier::wait_for_generation(std::uint32_t seen) const {
  InterruptPoll interrupts;  // while sleeping: Ctrl-C within ~50 ms (popdist/interrupts.hpp)
  for (int poll = 0; shared_->generation.load(std::memory_order_acquire) == seen; ++poll) {
    pause(seen, poll, kLongestSleepNs, false);
    if (poll >= spin_polls_ + yield_polls_) interrupts();
  }
}

void HostBarrier::pause(std::uint32_t round, int poll, long longest_ns, bool until_given_up) const noexcept {
  if (poll < spin_polls_) {
    cpu_relax();
  } else if (poll < spin_polls_ + yield_polls_) {
    sched_yield();
  } else {
    // Announce the sleep, then look again (sequentially consistent on both sides: either the
    // releaser sees the sleeper and wakes it, or this sees the new generation), then sleep
    // unless the generation has moved (the kernel checks that atomically).
    shared_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (shared_->generation.load(std::memory_order_seq_cst) == round &&
        (!until_given_up || (shared_->state.load(std::memory_order_seq_cst) & kGaveUp) == 0)) {
      futex_wait(shared_->generation, round, std::max(longest_ns, 1L));
    }
    shared_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

void HostBarrier::release(std::uint32_t next) const noexcept {
  shared_->generation.store(next, std::memory_order_seq_cst);
  if (shared_->sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(shared_->generation);
}

std::uint32_t HostBarrier::wait_for_arrivals() const {
  const auto others = static_cast<std::uint64_t>(local_count_ - 1);
  InterruptPoll interrupts;
  for (int poll = 0;; ++poll) {
    const auto state = shared_->state.load(std::memory_order_acquire);
    if (count_of(state) == others) return round_of(state);
    if (poll < spin_polls_) {
      cpu_relax();
    } else if (poll < spin_polls_ + yield_polls_) {
      sched_yield();
    } else {
      // The host's others are not running: give them the core (their arrival needs no wake).
      timespec pause{0, 20'000};
      nanosleep(&pause, nullptr);
      interrupts();
    }
  }
}

void HostBarrier::finish_round(std::uint32_t round) const noexcept {
  // Nobody arrives for the next round before the release below, so a plain store resets the
  // count; the state's round moves before the generation, so a released instance that arrives
  // at once counts in the new round.
  shared_->state.store(static_cast<std::uint64_t>(round + 1) << 32, std::memory_order_seq_cst);
  release(round + 1);
}

void HostBarrier::wait() {
  if (in_forked_child()) throw_forked_child("synchronize");
  if (fallback_ != MPI_COMM_NULL) {
    interruptible_barrier(fallback_, "MPI_Barrier");
    return;
  }
  if (leaders_size_ == 1 || local_rank_ != 0) {
    // One host, or a non-leader: count this arrival. On one host the last to arrive ends the
    // round and releases everyone; across hosts the leader does (below).
    const auto before = shared_->state.fetch_add(1, std::memory_order_acq_rel);
    if ((before & kGaveUp) != 0) {
      throw UsageError("synchronize: the instances of this host gave up an earlier timed synchronize over all "
                       "instances that this instance had not reached; the members are out of step");
    }
    const auto round = round_of(before);
    if (leaders_size_ == 1 && count_of(before) + 1 == static_cast<std::uint64_t>(local_count_)) {
      finish_round(round);
    } else {
      wait_for_generation(round);
    }
    return;
  }
  // Several hosts, the leader: waits for its host, meets the other leaders, then releases.
  const auto round = wait_for_arrivals();
  interruptible_barrier(leaders_, "MPI_Barrier");
  finish_round(round);
}

std::uint64_t HostBarrier::arrive_timed() noexcept {
  // The round cannot move before this instance has arrived: read it, mark the slot, count.
  const auto round = round_of(shared_->state.load(std::memory_order_acquire));
  auto& mine = slot(local_rank_);
  mine.store(slot_value(round, kPending), std::memory_order_seq_cst);
  const auto before = shared_->state.fetch_add(1, std::memory_order_seq_cst);
  mine.store(slot_value(round, (before & kGaveUp) != 0 ? kLate : kCounted), std::memory_order_release);
  return before;
}

int HostBarrier::gave_up_by() const noexcept {
  const auto until = std::chrono::steady_clock::now() + kSettleFor;
  for (;;) {
    const auto local = shared_->gave_up_by.load(std::memory_order_acquire);
    if (local != 0) return world_rank_of_[local - 1];
    if (std::chrono::steady_clock::now() >= until) return -1;
    sched_yield();
  }
}

HostBarrier::TimedOutcome HostBarrier::outcome_of_failure(TimedOutcome::Kind kind, std::uint32_t round) const {
  TimedOutcome outcome;
  outcome.kind = kind;
  outcome.gave_up_by = gave_up_by();
  if (kind == TimedOutcome::Late) return outcome;
  const auto until = std::chrono::steady_clock::now() + kSettleFor;
  for (int local = 0; local < local_count_; ++local) {
    if (local == local_rank_) continue;
    auto value = slot(local).load(std::memory_order_acquire);
    while (value == slot_value(round, kPending) && std::chrono::steady_clock::now() < until) {
      sched_yield();
      value = slot(local).load(std::memory_order_acquire);
    }
    if (value != slot_value(round, kCounted)) outcome.missing.push_back(world_rank_of_[static_cast<std::size_t>(local)]);
  }
  return outcome;
}

HostBarrier::TimedOutcome HostBarrier::wait_until(std::chrono::steady_clock::time_point deadline) {
  if (in_forked_child()) throw_forked_child("synchronize");
  InterruptPoll interrupts;
  const auto count = static_cast<std::uint64_t>(local_count_);
  const auto before = arrive_timed();
  const auto round = round_of(before);
  if ((before & kGaveUp) != 0) return outcome_of_failure(TimedOutcome::Late, round);
  if (count_of(before) + 1 == count) {
    finish_round(round);
    return {};
  }
  for (int poll = 0;; ++poll) {
    // Met once the generation moves (not when the state's round does: the finisher moves that
    // first, and nobody may run ahead of its release).
    if (shared_->generation.load(std::memory_order_acquire) != round) return {};
    auto state = shared_->state.load(std::memory_order_acquire);
    if ((state & kGaveUp) != 0 && round_of(state) == round) {
      return outcome_of_failure(TimedOutcome::OtherGaveUp, round);
    }
    const auto now = std::chrono::steady_clock::now();
    // At the deadline, end the round unless its last arrival is already releasing it (the count
    // is full then). The state holds the round, so the swap can only hit this round.
    if (now >= deadline && round_of(state) == round && count_of(state) < count) {
      if (shared_->state.compare_exchange_strong(state, state | kGaveUp, std::memory_order_acq_rel)) {
        shared_->gave_up_by.store(static_cast<std::uint32_t>(local_rank_ + 1), std::memory_order_release);
        futex_wake_all(shared_->generation);  // the sleepers look again, and find the bit
        return outcome_of_failure(TimedOutcome::TimedOut, round);
      }
      continue;  // the state moved: look again
    }
    if (now >= deadline && poll >= spin_polls_) {
      sched_yield();  // past the deadline, the last arrival is releasing the round: no sleep
    } else {
      // As in wait_for_generation, but never past the deadline. The giver wakes the sleepers.
      const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count();
      pause(round, poll, static_cast<long>(std::min<long long>(left, kLongestSleepNs)) + 1, true);
      if (poll >= spin_polls_ + yield_polls_) interrupts();
    }
  }
}

HostBarrier::Arrival HostBarrier::arrive_across() noexcept {
  const auto before = arrive_timed();
  return {round_of(before), (before & kGaveUp) != 0};
}

HostBarrier::Across HostBarrier::state_across(std::uint32_t round) const noexcept {
  // Released once the generation moves (the leader moves the state's round first).
  if (shared_->generation.load(std::memory_order_acquire) != round) return Across::Released;
  const auto state = shared_->state.load(std::memory_order_acquire);
  if (round_of(state) != round) return Across::Waiting;  // being released: the generation follows
  if ((state & kGaveUp) != 0) return Across::GivenUp;
  return count_of(state) == static_cast<std::uint64_t>(local_count_) ? Across::HostArrived : Across::Waiting;
}

bool HostBarrier::finish_across(std::uint32_t round) noexcept {
  // One compare-and-swap against give_up_across's: the host agrees on whether the round was met.
  auto full = (static_cast<std::uint64_t>(round) << 32) | static_cast<std::uint64_t>(local_count_);
  if (!shared_->state.compare_exchange_strong(full, static_cast<std::uint64_t>(round + 1) << 32,
                                              std::memory_order_acq_rel)) {
    return false;
  }
  release(round + 1);
  return true;
}

bool HostBarrier::give_up_across(std::uint32_t round) noexcept {
  auto state = shared_->state.load(std::memory_order_acquire);
  for (;;) {
    if (round_of(state) != round) return false;  // released (or being released)
    if ((state & kGaveUp) != 0) return true;     // another instance of the host was first
    if (shared_->state.compare_exchange_weak(state, state | kGaveUp, std::memory_order_acq_rel)) break;
  }
  shared_->gave_up_by.store(static_cast<std::uint32_t>(local_rank_ + 1), std::memory_order_release);
  futex_wake_all(shared_->generation);  // the sleepers look again, and find the bit
  return true;
}

void HostBarrier::pause_across(std::uint32_t round, int poll, std::chrono::nanoseconds longest) const noexcept {
  pause(round, poll, static_cast<long>(longest.count()), true);
}

HostBarrier::TimedOutcome HostBarrier::failure_across(std::uint32_t round, bool late) const {
  return outcome_of_failure(late ? TimedOutcome::Late : TimedOutcome::TimedOut, round);
}

}  // namespace popdist::detail
