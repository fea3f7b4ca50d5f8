#pragma once
// The last resort for a blocking call popdist cannot bound itself: MPI_Init_thread, and the
// blocking collectives init() needs (MPI_Comm_dup, MPI_Comm_split_type), block forever when a
// peer died before joining and the launcher does not end the job (srun without
// --kill-on-bad-exit). With POPDIST_SYNC_TIMEOUT set, a watchdog thread ends the process once
// the timeout has passed, with a message saying what it waited for, instead of a silent hang.
// The one place the library ends a process itself (design.md §7): there is no caller left to
// throw to while MPI blocks.

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace popdist::detail {

class Watchdog {
 public:
  /// Exit status of a process the watchdog ends (the `timeout` command's).
  static constexpr int kExitStatus = 124;

  /// What is usually wrong when MPI's start-up does not return.
  static constexpr const char* kNeverJoined = "some instance of the job never joined (died or stopped before init())";
  /// Arms a watchdog for `seconds` (none: no thread at all). `what` completes "waited for ...";
  /// `cause` says what is likely wrong (the stage decides: later ones know everyone joined).
  Watchdog(std::optional<double> seconds, std::string what, std::string cause = kNeverJoined);
  /// Disarms it (the guarded calls returned) and joins the thread.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace popdist::detail
