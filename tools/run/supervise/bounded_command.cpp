#include "run/supervise/bounded_command.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "io/fd.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kKeep = 64 * 1024;

/// The three pipes of the child: its stdout, its stderr, and exec's errno (closed on a good exec).
struct ChildPipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int exec_status[2] = {-1, -1};
};

/// In the child (of a process with threads: only async-signal-safe calls): the pipes as stdout
/// and stderr, default signal actions (popdist run's handlers would forward a signal to its
/// launcher), then exec; when exec fails, its errno to the status pipe and 127, as a shell's.
[[noreturn]] void exec_child(std::vector<char*>& args, const ChildPipes& pipes, const sigset_t& old_mask) {
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT}) ::signal(signal, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  ::dup2(pipes.out[1], STDOUT_FILENO);
  ::dup2(pipes.err[1], STDERR_FILENO);
  ::execvp(args[0], args.data());
  const int error = errno;
  [[maybe_unused]] const auto written = ::write(pipes.exec_status[1], &error, sizeof error);
  ::_exit(127);
}

/// Makes the three pipes (close-on-exec); false, with errno, when one cannot be made.
bool make_pipes(ChildPipes& pipes) {
  return ::pipe2(pipes.out, O_CLOEXEC) == 0 && ::pipe2(pipes.err, O_CLOEXEC) == 0 &&
         ::pipe2(pipes.exec_status, O_CLOEXEC) == 0;
}

void close_all(ChildPipes& pipes) {
  for (int* pair : {pipes.out, pipes.err, pipes.exec_status}) {
    for (int i = 0; i < 2; ++i) {
      if (pair[i] >= 0) ::close(pair[i]), pair[i] = -1;
    }
  }
}

/// The errno the child wrote when exec failed; 0 when the pipe closed on a good exec.
int exec_error(int status_read) {
  int error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_read, &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  return got == static_cast<ssize_t>(sizeof error) ? error : 0;
}

/// Reads what is there from `fd` into `into`; false at its end (or an error other than EAGAIN/EINTR).
bool drain(int fd, std::string& into) {
  char buffer[4096];
  const ssize_t got = ::read(fd, buffer, sizeof buffer);
  if (got > 0) {
    into.append(buffer, static_cast<std::size_t>(std::min<std::size_t>(static_cast<std::size_t>(got),
                                                                     kKeep - std::min(kKeep, into.size()))));
    return true;
  }
  return got < 0 && (errno == EAGAIN || errno == EINTR);
}

/// Both pipes read to their ends, or until the deadline; false when the deadline came first.
bool read_until(int out, int err, BoundedOutput& result, Clock::time_point deadline) {
  pollfd fds[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    if (::poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      if (!drain(fds[i].fd, i == 0 ? result.out : result.err)) fds[i].fd = -1;
    }
  }
  return true;
}

/// waitpid until the deadline (the pipes closed: it is ending); SIGKILL after it. True when it ended in time.
bool reap(pid_t pid, int& status, Clock::time_point deadline) {
  while (true) {
    const pid_t waited = ::waitpid(pid, &status, WNOHANG);
    if (waited == pid) return true;
    if (waited < 0 && errno != EINTR) return false;
    if (Clock::now() >= deadline) break;
    ::usleep(5000);
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return false;
}

}  // namespace

BoundedOutput run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  BoundedOutput result;
  const std::string name = argv.empty() ? std::string("(nothing)") : argv.front();
  ChildPipes pipes;
  if (argv.empty() || !make_pipes(pipes)) {
    result.problem = fmt::format("cannot start {}: {}", name, argv.empty() ? "no command" : std::strerror(errno));
    close_all(pipes);
    return result;
  }
  std::vector<char*> args;
  for (const auto& word : argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  // Signals blocked across fork: a forwarded signal must not reach popdist run's handler in the child.
  sigset_t all, old_mask;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &old_mask);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(args, pipes, old_mask);
  const int fork_error = errno;
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  const io::Fd out_read(pipes.out[0]), err_read(pipes.err[0]), status_read(pipes.exec_status[0]);
  ::close(pipes.out[1]), ::close(pipes.err[1]), ::close(pipes.exec_status[1]);
  if (pid < 0) {
    result.problem = fmt::format("cannot start {}: fork failed: {}", name, std::strerror(fork_error));
    return result;
  }
  const int error = exec_error(status_read.get());  // at once: the pipe closes at exec or exit
  const auto deadline = Clock::now() + limit;
  const bool read_all = read_until(out_read.get(), err_read.get(), result, deadline);
  int status = 0;
  const bool ended = reap(pid, status, read_all ? deadline : Clock::now()) && read_all;
  if (error != 0) {
    result.problem = fmt::format("cannot start {}: {}", name, std::strerror(error));
  } else if (!ended) {
    result.problem = fmt::format("{} did not end within {:.1f} s", name, std::chrono::duration<double>(limit).count());
  } else {
    result.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }
  return result;
}

}  // namespace popdist::cli
