#pragma once
// Checked MPI calls and the lock that serializes them when MPI gives less than
// MPI_THREAD_MULTIPLE (design.md §5.5).

#include <mpi.h>

#include <atomic>
#include <mutex>
#include <string>

namespace popdist::detail {

/// Throws MpiError(function, code, MPI_Error_string(code)). Kept out of line and cold so that
/// the check on the hot path (synchronize) is one compare and a not-taken branch.
[[noreturn]] void throw_mpi_error(const char* function, int code);

/// Every MPI return code goes through here. Only communicators popdist owns have
/// MPI_ERRORS_RETURN, so calls on them report errors instead of aborting the job.
inline void check_mpi(int code, const char* function) {
  if (__builtin_expect(code != MPI_SUCCESS, 0)) {
    throw_mpi_error(function, code);
  }
}

/// True when popdist must serialize its MPI calls (the library gave less than MULTIPLE): the
/// hot-path copy of RuntimeState::thread_level, read by every MPI call. A global because this
/// layer sits below the process state and must not reach up to it (no call, no guard either).
inline std::atomic<bool> g_mpi_calls_serialized_copy{false};
inline bool mpi_calls_serialized() noexcept { return g_mpi_calls_serialized_copy.load(std::memory_order_relaxed); }
inline void set_mpi_calls_serialized(bool serialized) noexcept { g_mpi_calls_serialized_copy.store(serialized); }

/// Holds the MPI lock for its lifetime when calls are serialized; a no-op otherwise (one
/// predictable branch: with MPI_THREAD_MULTIPLE, the common case, nothing is locked).
class MpiLock {
 public:
  MpiLock() {
    if (mpi_calls_serialized()) lock();
  }
  ~MpiLock() {
    if (locked_) unlock();
  }
  MpiLock(const MpiLock&) = delete;
  MpiLock& operator=(const MpiLock&) = delete;
  MpiLock(MpiLock&&) = delete;
  MpiLock& operator=(MpiLock&&) = delete;

 private:
  void lock();
  void unlock();
  bool locked_ = false;
};

/// MPI_Initialized && !MPI_Finalized; both may be called from any thread at any time.
[[nodiscard]] bool mpi_is_usable() noexcept;
/// MPI_Initialized: whether MPI was ever initialized (by popdist or by anyone else in the process).
[[nodiscard]] bool mpi_was_initialized() noexcept;
/// MPI_Get_library_version's text (callable before MPI_Init and after MPI_Finalize).
[[nodiscard]] std::string mpi_library_version();

}  // namespace popdist::detail
