#pragma once
// Runs one child process (mpirun) to completion: fork + execv, waitpid, and SIGINT/SIGTERM/
// SIGHUP sent to us forwarded to it, so that mpirun tears the whole job down. No process
// management beyond that: mpirun is the process manager -- except when it hangs after its job
// has ended (the unreaped limit below).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// How to notice that the program (mpirun) hangs after its job ended, and what to report then.
struct HangWatch {
  /// One of the program's own children that has ended and stays unreaped this long means the
  /// program hangs in its teardown.
  std::chrono::milliseconds unreaped_limit{};
  /// Where the instances recorded how they ended (instance_status.hpp); empty: nowhere.
  std::string status_directory;
};

/// Starts the program at `path` with `argv` (argv[0] as the program will see it) and waits for it. Returns its exit status, or 128 + the
/// signal number when a signal ended it (as shells report it). Throws popdist::Error when the
/// process cannot be started (naming the program and strerror).
///
/// With `hang_watch`: when the program is found hanging, it is killed (SIGKILL, after a message
/// saying why) and the result is the status of the instance that failed first as recorded in
/// the status directory -- the one mpirun would have reported -- else the lowest non-zero status
/// among its unreaped children, or 0 when all succeeded. (mpirun tears a failed job down with
/// SIGTERM and SIGKILL, 143 and 137, so the lowest is usually, but not always, the instance that
/// failed first: that one may already have been reaped.)
[[nodiscard]] int run_and_wait(const std::string& path, const std::vector<std::string>& argv,
                               const std::optional<HangWatch>& hang_watch = std::nullopt);

}  // namespace popdist::cli
