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

/// Starts the program at `path` with `argv` (argv[0] as the program will see it) and waits for it. Returns its exit status, or 128 + the
/// signal number when a signal ended it (as shells report it). Throws popdist::Error when the
/// process cannot be started (naming the program and strerror).
///
/// With `unreaped_limit`: when one of the program's own children has ended and stayed unreaped
/// that long, the program is taken to hang in its teardown. It is then killed (SIGKILL, after
/// a message saying why) and the result is the lowest non-zero status among its unreaped
/// children, or 0 when all succeeded. (mpirun tears a failed job down with SIGTERM and SIGKILL,
/// 143 and 137, so the lowest is usually the instance that failed first.)
[[nodiscard]] int run_and_wait(const std::string& path, const std::vector<std::string>& argv,
                               std::optional<std::chrono::milliseconds> unreaped_limit = std::nullopt);

}  // namespace popdist::cli
