#pragma once
// Runs one child process (mpirun) to completion: fork + execv, waitpid, and the signals sent to us
// forwarded to it (SIGINT/SIGTERM/SIGHUP: mpirun tears the whole job down; SIGUSR1/SIGUSR2,
// SIGTSTP/SIGCONT: mpirun passes them on to every instance), and its watches (watch.hpp) asked
// while it runs. No process management beyond that: mpirun is the process manager -- except when
// a watch's verdict ends it (a lost host, a stall, a hang in its own teardown).

#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "run/supervise/watch.hpp"

namespace popdist::cli {

/// How the program ended under its watches: its status, and the verdict of the watch that ended
/// it, when one did.
struct WatchedRun {
  int status = 0;
  std::optional<WatchVerdict> verdict;
};

/// The SIGINT, SIGTERM or SIGHUP that reached popdist run during the last run (the user or a
/// scheduler stopping the job: no restart then); 0 when none did.
[[nodiscard]] int stop_signal_received();

/// Starts the program at `path` with `argv` (argv[0] as the program will see it) and waits for it.
/// Returns its exit status, or 128 + the signal number when a signal ended it (as shells report
/// it). Throws popdist::Error when the process cannot be started (naming the program and strerror).
[[nodiscard]] int run_and_wait(const std::string& path, const std::vector<std::string>& argv);

/// How the launcher is told to stop. `death`: what it gets when popdist run dies without
/// forwarding anything (hydra's mpiexec: SIGKILL, after which its proxies end every instance; on
/// SIGTERM it would wait for instances that ignore it). `stop`: the signal a stop (SIGINT,
/// SIGTERM, SIGHUP, or a watch's graceful ending) is sent as; 0: as received, SIGTERM for a watch.
/// `kill`: a watch's forced ending. Slurm's srun turns a SIGTERM of its own into SIGKILL of every
/// task, and SIGKILLed it leaves the step running: it is stopped with SIGINT (--disable-status
/// passes one on to every task) and forced with SIGTERM. `deliver_term`, when set: a SIGTERM to
/// popdist run is not sent to the launcher but handed to it, outside the signal handler (it may
/// run commands: srun's step gets it from scancel, slurm_step.hpp), and so is a watch's graceful
/// ending; when it returns false, `stop` is sent to the launcher as without it.
struct LauncherSignals {
  int death = SIGTERM;
  int stop = 0;
  int kill = SIGKILL;
  std::function<bool(int)> deliver_term;
};

/// run_and_wait() under `watches` (watch.hpp): each is asked every half second, in order, while
/// the program runs; the first verdict ends the program as it says (with `signals`), and the
/// status is then the verdict's.
[[nodiscard]] WatchedRun run_watched(const std::string& path, const std::vector<std::string>& argv,
                                     std::vector<Watch> watches, LauncherSignals signals = {});

}  // namespace popdist::cli
