#pragma once
// One short command of the cluster's (squeue, scancel, sinfo) run to its end within a time limit,
// its output captured: what popdist run asks Slurm while it supervises an srun job. Never waits
// past the limit: a command still running then is SIGKILLed, and says so.

#include <chrono>
#include <string>
#include <vector>

namespace popdist::cli {

/// How the command ended. `status`: its exit status, 128 + signal when a signal ended it, -1 when
/// it could not be started or ran out of time (`problem` then says which).
struct BoundedOutput {
  int status = -1;
  std::string out;      ///< its stdout (at most 64 KiB kept)
  std::string err;      ///< its stderr (at most 64 KiB kept)
  std::string problem;  ///< "cannot start squeue: ...", "squeue did not end within 3 s"; empty when it ended
};

/// Runs `argv` (argv[0] looked up on PATH when it has no '/') with /dev/null as stdin, and waits
/// for it at most `limit`. Signals popdist run forwards are set back to their defaults in the child.
[[nodiscard]] BoundedOutput run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds limit);

}  // namespace popdist::cli
