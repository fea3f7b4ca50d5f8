#pragma once
// Runs one child process (mpirun) to completion: fork + execv, waitpid, and SIGINT/SIGTERM/
// SIGHUP sent to us forwarded to it, so that mpirun tears the whole job down. No process
// management beyond that: mpirun is the process manager.

#include <string>
#include <vector>

namespace popdist::cli {

/// Starts the program at `path` with `argv` (argv[0] as the program will see it) and waits for it. Returns its exit status, or 128 + the
/// signal number when a signal ended it (as shells report it). Throws popdist::Error when the
/// process cannot be started (naming the program and strerror).
[[nodiscard]] int run_and_wait(const std::string& path, const std::vector<std::string>& argv);

}  // namespace popdist::cli
