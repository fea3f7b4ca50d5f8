#pragma once
// The host barrier's shared memory, made by popdist itself (POSIX shared memory in /dev/shm) rather
// than by MPI_Win_allocate_shared: Open MPI's osc/sm creates its segment on the communicator's rank 0
// and, when that fails (a full /dev/shm), returns an error there while the others wait in its own
// MPI_Bcast for the segment's name, forever. Here every step that can fail is one process's own
// system call, and the instances agree on the outcome in collectives that all of them reach
// (host_barrier.cpp), so a failure anywhere is a fallback everywhere, never a job split in two.
// No MPI here.

#include <cstddef>
#include <string>

namespace popdist::detail {

class SharedSegment {
 public:
  /// Room for a POSIX shared-memory name ("/popdist-...") and its terminating NUL.
  static constexpr std::size_t kNameSize = 64;

  SharedSegment() = default;
  /// Unmaps (the name is unlinked by whoever created it, once every instance mapped it).
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  /// Creates a segment of `bytes` (all of it reserved: a full /dev/shm fails here, not later as
  /// SIGBUS), zero-filled, and maps it. Returns "" or what failed, naming /dev/shm and errno.
  std::string create(std::size_t bytes);
  /// Maps the segment another process created under `name`. Returns "" or what failed.
  std::string open(const char* name, std::size_t bytes);
  /// Removes the name (the mapping stays); creator only, once the others have mapped it.
  void unlink() noexcept;
  /// Unmaps now (the instances agreed not to use the segment).
  void release() noexcept;

  [[nodiscard]] void* base() const noexcept { return base_; }
  [[nodiscard]] const char* name() const noexcept { return name_; }

 private:
  std::string map(int fd, std::size_t bytes, const char* what);

  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  char name_[kNameSize] = "";
  bool named_ = false;  ///< this process created the name and has not unlinked it yet
};

}  // namespace popdist::detail
