#include "run/supervise/process_runner.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "io/fd.hpp"
#include "job/shell_status.hpp"
#include "job/parent_death.hpp"
#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

/// What the signal handler shares with run_and_wait. Globals of volatile sig_atomic_t because a
/// handler may only touch those (C and POSIX async-signal safety), and a handler takes no argument.
struct HandlerShared {
  volatile sig_atomic_t child_pid = 0;
  volatile sig_atomic_t stop_signal = 0;
  volatile sig_atomic_t own_group = 0;  ///< the child has a process group of its own (under nohup)
  volatile sig_atomic_t stop_as = 0;    ///< LauncherSignals::stop of the run
  volatile sig_atomic_t defer_term = 0;  ///< a SIGTERM is left to LauncherSignals::deliver_term
  volatile sig_atomic_t terms_received = 0;  ///< SIGTERMs left to deliver_term (written by the handler only)
};
HandlerShared g_handler_shared;

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT};
constexpr int kForwardedCount = sizeof kForwardedSignals / sizeof kForwardedSignals[0];
constexpr int kHangupSlot = 2;  // kForwardedSignals[kHangupSlot] == SIGHUP
static_assert(kForwardedSignals[kHangupSlot] == SIGHUP);

// Forward a signal that a process sent to us (kill, Slurm, a test's timeout). A signal the
// terminal generated (Ctrl-C, Ctrl-Z: si_code SI_KERNEL) already went to the whole foreground
// process group, mpirun included; sending it again would turn mpirun's orderly abort into a
// forced one. SIGTSTP then stops popdist run itself too, as it would have without the handler.
void forward_signal(int signal, siginfo_t* info, void*) {
  auto& shared = g_handler_shared;
  const bool from_a_process =
      shared.own_group != 0 || info == nullptr || info->si_code == SI_USER || info->si_code == SI_QUEUE;
  const bool stop = signal == SIGINT || signal == SIGTERM || signal == SIGHUP;
  if (stop) shared.stop_signal = signal;
  if (signal == SIGTERM && shared.defer_term != 0) {
    shared.terms_received = shared.terms_received + 1;  // the wait loop delivers it (it cannot run scancel here)
    return;
  }
  const int sent = stop && shared.stop_as != 0 ? static_cast<int>(shared.stop_as) : signal;
  if (shared.child_pid > 0 && from_a_process) ::kill(shared.child_pid, sent);
  if (signal == SIGTSTP) ::raise(SIGSTOP);
}

/// In the child, before exec: a process group of its own, and /dev/null for a terminal's input
/// (reading the terminal from outside its foreground group would stop it with SIGTTIN).
void start_own_group() {
  ::setpgid(0, 0);
  if (::isatty(STDIN_FILENO) == 0) return;
  const int null = ::open("/dev/null", O_RDONLY);
  if (null < 0) return;
  ::dup2(null, STDIN_FILENO);
  ::close(null);
}

/// Blocking waitpid, through interruptions by the forwarded signals.
pid_t wait_for(pid_t pid, int& status) {
  pid_t waited = 0;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  return waited;
}

/// Ends `pid` as `verdict` says: SIGKILL at once, or SIGTERM and then (sigterm_then_sigkill)
/// SIGKILL when it is still there after the verdict's grace. The SIGTERM goes to deliver_term
/// when there is one (srun's step: the instances see SIGTERM, which the report counts as the
/// teardown's), else as `stop`. Returns what waitpid returned; `status` becomes the verdict's
/// status (as a wait status).
pid_t end_as_told(pid_t pid, const WatchVerdict& verdict, int& status, const LauncherSignals& signals) {
  using Ending = WatchVerdict::Ending;
  const int stop = signals.stop != 0 ? signals.stop : SIGTERM;
  if (verdict.ending == Ending::sigkill) {
    ::kill(pid, signals.kill);
  } else if (!signals.deliver_term || !signals.deliver_term(SIGTERM)) {
    ::kill(pid, stop);
  }
  pid_t waited = 0;
  if (verdict.ending == Ending::sigterm_then_sigkill) {
    const auto deadline = std::chrono::steady_clock::now() + verdict.grace;
    while (waited != pid && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      waited = ::waitpid(pid, &status, WNOHANG);
    }
    if (waited != pid) ::kill(pid, signals.kill);
  }
  if (waited != pid) waited = wait_for(pid, status);
  status = W_EXITCODE(verdict.status, 0);
  return waited;
}

/// What waiting under the watches found: waitpid's result, the wait status, the verdict if any.
struct Waited {
  pid_t waited = 0;
  int status = 0;
  std::optional<WatchVerdict> verdict;
};

/// Up to `period` or until `pidfd` (a pidfd of the child, or -1) says the child has ended: a
/// short job then ends when its launcher does, not at the next poll (up to 100 ms later; hydra's
/// bare `mpiexec -n 2 true` takes 9 ms).
void pause_for_child(int pidfd, std::chrono::milliseconds period) {
  if (pidfd < 0) {
    std::this_thread::sleep_for(period);
    return;
  }
  pollfd child{pidfd, POLLIN, 0};
  (void)::poll(&child, 1, static_cast<int>(period.count()));  // EINTR: a forwarded signal, look again
}

/// The SIGTERMs the handler left to `signals.deliver_term` and not yet `delivered`: one delivery
/// each; when one fails, the launcher gets `stop` as it would have from the handler. (Only the
/// handler counts what was received, only the loop what was delivered: no update is lost.)
void deliver_pending_term(pid_t pid, const LauncherSignals& signals, int& delivered) {
  while (delivered < g_handler_shared.terms_received) {
    ++delivered;
    if (!signals.deliver_term(SIGTERM)) ::kill(pid, signals.stop != 0 ? signals.stop : SIGTERM);
  }
}

/// waitpid for `pid`, polling every 100 ms (at once when it ends), asking every watch every half
/// second (a watch may read /proc); the first verdict ends the program as it says.
Waited wait_watched(pid_t pid, std::vector<Watch>& watches, const LauncherSignals& signals) {
  constexpr auto poll = std::chrono::milliseconds(100);
  constexpr int polls_per_look = 5;
  const io::Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));  // Linux 5.3 on; else -1: sleep
  Waited result;
  int terms_delivered = 0;
  for (int round = 0;; ++round) {
    result.waited = ::waitpid(pid, &result.status, WNOHANG);
    if (result.waited != 0 && !(result.waited < 0 && errno == EINTR)) return result;
    pause_for_child(pidfd.get(), poll);
    if (signals.deliver_term) deliver_pending_term(pid, signals, terms_delivered);
    if (round % polls_per_look != 0) continue;
    for (auto& watch : watches) {
      result.verdict = watch(pid);
      if (result.verdict) {
        result.waited = end_as_told(pid, *result.verdict, result.status, signals);
        return result;
      }
    }
  }
}

/// The forwarded signals' handler for its lifetime: installed (except where ignored, as under
/// nohup), the signals blocked until the child's pid is known (then they are forwarded), the
/// previous handlers restored at the end.
class ForwardedSignals {
 public:
  ForwardedSignals() {
    struct sigaction forward {};
    forward.sa_sigaction = forward_signal;
    forward.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&forward.sa_mask);
    g_handler_shared.stop_signal = 0;
    for (int i = 0; i < kForwardedCount; ++i) {
      ::sigaction(kForwardedSignals[i], nullptr, &previous_[i]);
      // Under nohup (SIGHUP ignored) the hangup stays ignored, for mpirun too (it inherits that).
      if (previous_[i].sa_handler != SIG_IGN) ::sigaction(kForwardedSignals[i], &forward, nullptr);
    }
    // Under nohup, the hangup that ends a session goes to whole process groups: mpirun gets a
    // group of its own, so that it never sees one (it would end the job), and every signal goes
    // through us.
    g_handler_shared.own_group = previous_[kHangupSlot].sa_handler == SIG_IGN ? 1 : 0;
    sigset_t blocked;
    sigemptyset(&blocked);
    for (const int signal : kForwardedSignals) sigaddset(&blocked, signal);
    ::sigprocmask(SIG_BLOCK, &blocked, &old_mask_);
  }
  ~ForwardedSignals() {
    for (int i = 0; i < kForwardedCount; ++i) ::sigaction(kForwardedSignals[i], &previous_[i], nullptr);
    g_handler_shared.child_pid = 0;
    g_handler_shared.stop_as = 0;
    g_handler_shared.defer_term = 0;
    g_handler_shared.terms_received = 0;
  }
  ForwardedSignals(const ForwardedSignals&) = delete;
  ForwardedSignals& operator=(const ForwardedSignals&) = delete;

  /// The signal mask from before: pending signals are delivered (and forwarded) from here on.
  void unblock() const { ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr); }

 private:
  struct sigaction previous_[kForwardedCount];
  sigset_t old_mask_;
};

/// In the child after fork: exec `path`, or write errno to the status pipe and exit 127.
[[noreturn]] void exec_in_child(const std::string& path, std::vector<char*>& args, int status_pipe[2], pid_t parent,
                                const ForwardedSignals& signals, int death_signal) {
  // Die with popdist run even when it cannot forward anything (SIGKILL from the OOM killer, a
  // scheduler, `timeout -s KILL`): the kernel then sends `death_signal` (mpirun: SIGTERM, on
  // which it ends its instances as it does on a forwarded one).
  if (!end_with_parent(death_signal, parent)) ::_exit(128 + death_signal);
  // exec resets caught signals to their default; nothing else to undo.
  ::close(status_pipe[0]);
  if (g_handler_shared.own_group != 0) start_own_group();
  signals.unblock();
  ::execv(path.c_str(), args.data());
  const int error = errno;
  [[maybe_unused]] const auto written = ::write(status_pipe[1], &error, sizeof error);
  ::_exit(127);
}

/// The errno the child wrote when execv failed, or 0 when the pipe closed on a successful exec.
int read_exec_error(int status_read) {
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_read, &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  ::close(status_read);
  return got == static_cast<ssize_t>(sizeof exec_error) ? exec_error : 0;
}

}  // namespace

int stop_signal_received() { return g_handler_shared.stop_signal; }

int run_and_wait(const std::string& path, const std::vector<std::string>& argv) {
  return run_watched(path, argv, {}).status;
}

WatchedRun run_watched(const std::string& path, const std::vector<std::string>& argv, std::vector<Watch> watches,
                       LauncherSignals launcher_signals) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  // A pipe closed on exec tells the parent whether execv failed, and with which errno.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) throw Error(fmt::format("pipe2 failed: {}", std::strerror(errno)));

  const ForwardedSignals signals;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    signals.unblock();
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    throw Error(fmt::format("cannot start {}: fork failed: {}", path, std::strerror(error)));
  }
  if (pid == 0) exec_in_child(path, args, status_pipe, parent, signals, launcher_signals.death);
  g_handler_shared.stop_as = launcher_signals.stop;
  g_handler_shared.defer_term = launcher_signals.deliver_term ? 1 : 0;
  g_handler_shared.child_pid = pid;
  signals.unblock();
  ::close(status_pipe[1]);
  const int exec_error = read_exec_error(status_pipe[0]);

  Waited waited;
  if (watches.empty() && !launcher_signals.deliver_term) {
    waited.waited = wait_for(pid, waited.status);
  } else {
    waited = wait_watched(pid, watches, launcher_signals);
  }
  if (exec_error != 0) throw Error(fmt::format("cannot start {}: {}", path, std::strerror(exec_error)));
  if (waited.waited < 0) throw Error(fmt::format("waitpid for {} failed: {}", path, std::strerror(errno)));
  return {shell_status(waited.status), std::move(waited.verdict)};
}

}  // namespace popdist::cli
