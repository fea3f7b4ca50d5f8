#include "process_runner.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

volatile sig_atomic_t child_pid = 0;

// Forward a signal that a process sent to us (kill, Slurm, a test's timeout). A signal the
// terminal generated (Ctrl-C: si_code SI_KERNEL) already went to the whole foreground process
// group, mpirun included; sending it again would turn mpirun's orderly abort into a forced one.
void forward_signal(int signal, siginfo_t* info, void*) {
  const bool from_a_process = info == nullptr || info->si_code == SI_USER || info->si_code == SI_QUEUE;
  if (child_pid > 0 && from_a_process) ::kill(child_pid, signal);
}

}  // namespace

int run_and_wait(const std::string& path, const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  // A pipe closed on exec tells the parent whether execv failed, and with which errno.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) throw Error(fmt::format("pipe2 failed: {}", std::strerror(errno)));

  struct sigaction forward {};
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  struct sigaction previous[3];
  const int forwarded[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; ++i) ::sigaction(forwarded[i], &forward, &previous[i]);
  auto restore = [&] {
    for (int i = 0; i < 3; ++i) ::sigaction(forwarded[i], &previous[i], nullptr);
    child_pid = 0;
  };

  // Signals that arrive before child_pid is known stay pending until it is, then get forwarded.
  sigset_t blocked;
  sigset_t old_mask;
  sigemptyset(&blocked);
  for (const int signal : forwarded) sigaddset(&blocked, signal);
  ::sigprocmask(SIG_BLOCK, &blocked, &old_mask);

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    restore();
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    throw Error(fmt::format("cannot start {}: fork failed: {}", path, std::strerror(error)));
  }
  if (pid == 0) {
    // exec resets caught signals to their default; nothing else to undo.
    ::close(status_pipe[0]);
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::execv(path.c_str(), args.data());
    const int error = errno;
    [[maybe_unused]] const auto written = ::write(status_pipe[1], &error, sizeof error);
    ::_exit(127);
  }
  child_pid = pid;
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::close(status_pipe[1]);
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_pipe[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);

  int status = 0;
  pid_t waited = 0;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  restore();
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    throw Error(fmt::format("cannot start {}: {}", path, std::strerror(exec_error)));
  }
  if (waited < 0) throw Error(fmt::format("waitpid for {} failed: {}", path, std::strerror(errno)));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace popdist::cli
