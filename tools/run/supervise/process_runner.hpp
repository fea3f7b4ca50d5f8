#pragma once
// Runs one child process (mpirun) to completion: fork + execv, waitpid, and the signals sent to us
// forwarded to it (SIGINT/SIGTERM/SIGHUP: mpirun tears the whole job down; SIGUSR1/SIGUSR2,
// SIGTSTP/SIGCONT: mpirun passes them on to every instance). No process
// management beyond that: mpirun is the process manager -- except when it hangs after its job
// has ended (the unreaped limit below).

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// How to notice that the program (mpirun) hangs after its job ended, and what to report then.
struct HangWatch {
  /// One of the program's own children that has ended and stays unreaped this long means the
  /// program hangs in its teardown.
  std::chrono::milliseconds unreaped_limit{};
  /// The status of the instance that failed first, as the agents told it (job_records.hpp).
  std::function<std::optional<int>()> first_failure;
  /// The newest output of any instance, for the stall watch (stall_watch.hpp).
  std::function<std::optional<std::chrono::steady_clock::time_point>()> last_output;
  /// --stall-timeout: after this long without output from any instance (stall_watch.hpp),
  /// `on_stall` runs (the stack report); then the program is ended (status kStallStatus) unless
  /// `keep_running_on_stall`.
  std::optional<std::chrono::milliseconds> stall_limit;
  std::function<void()> on_stall;
  bool keep_running_on_stall = false;
  /// --host-timeout: true once a host is lost (host_liveness.hpp); the program is then ended --
  /// SIGTERM, and SIGKILL after `lost_host_grace` (a cut link can hold mpirun's teardown
  /// forever) -- with status kLostHostStatus.
  std::function<bool()> host_lost;
  std::chrono::milliseconds lost_host_grace{3000};
};

/// popdist run's exit status after --stall-timeout ended a job.
inline constexpr int kStallStatus = 125;
/// popdist run's exit status after a host was lost (--host-timeout).
inline constexpr int kLostHostStatus = 122;

/// The SIGINT, SIGTERM or SIGHUP that reached popdist run during the last run_and_wait (the user
/// or a scheduler stopping the job: no restart then); 0 when none did.
[[nodiscard]] int stop_signal_received();

/// Starts the program at `path` with `argv` (argv[0] as the program will see it) and waits for it. Returns its exit status, or 128 + the
/// signal number when a signal ended it (as shells report it). Throws popdist::Error when the
/// process cannot be started (naming the program and strerror).
///
/// With `hang_watch`: when the program is found hanging, it is killed (SIGKILL, after a message
/// saying why) and the result is the status of the instance that failed first as its agent
/// told it -- the one mpirun would have reported -- else the lowest non-zero status
/// among its unreaped children, or 0 when all succeeded. (mpirun tears a failed job down with
/// SIGTERM and SIGKILL, 143 and 137, so the lowest is usually, but not always, the instance that
/// failed first: that one may already have been reaped.)
[[nodiscard]] int run_and_wait(const std::string& path, const std::vector<std::string>& argv,
                               const std::optional<HangWatch>& hang_watch = std::nullopt);

}  // namespace popdist::cli
