#pragma once
// What watches mpirun while it runs, as process_runner.hpp polls it: a list of watches, each a
// function asked every half second that answers nothing (all is well, or it has done what it does
// and mpirun runs on) or a verdict -- the attempt's status and how mpirun is to be ended. Each
// watch is one concern in a file of its own: a lost host (lost_host_watch.hpp), a stall
// (stall_watch.hpp), an mpirun hanging in its teardown (hung_teardown.hpp). A watch returns what
// it found, in its verdict; nothing is written aside for the caller to pick up.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "run/supervise/host_liveness.hpp"

namespace popdist::cli {

/// popdist run's exit status after --stall-timeout ended a job.
inline constexpr int kStallStatus = 125;
/// popdist run's exit status after a host was lost (--host-timeout).
inline constexpr int kLostHostStatus = 122;

/// What a watch found that ends the attempt.
struct WatchVerdict {
  /// How mpirun is ended.
  enum class Ending {
    sigterm,                ///< SIGTERM, then mpirun's own teardown is waited for
    sigterm_then_sigkill,   ///< SIGTERM, then SIGKILL when mpirun is still there after `grace`
    sigkill,                ///< SIGKILL at once (mpirun no longer does anything)
  };
  int status = 0;  ///< the attempt's exit status, as a shell reports it
  Ending ending = Ending::sigterm;
  std::chrono::milliseconds grace{};  ///< for sigterm_then_sigkill
  std::vector<LostHost> lost;         ///< the lost-host watch's finding; empty for the others
  std::string unreached{};            ///< the startup watch's lines on hosts that never spoke (unreached_hosts.hpp)
};

/// One watch: asked every half second with mpirun's pid while it runs; a verdict ends mpirun.
using Watch = std::function<std::optional<WatchVerdict>(pid_t mpirun)>;

}  // namespace popdist::cli
