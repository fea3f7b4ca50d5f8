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

/// In the child: the pipes as stdout and stderr, default signal actions (popdist run's handlers
/// would forward a signal to its launcher), then exec. 127 when exec fails, as a shell's.
[[noreturn]] void exec_child(std::vector<char*>& args, int out, int err, const sigset_t& old_mask) {
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT}) ::signal(signal, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  ::execvp(args[0], args.data());
  const auto message = fmt::format("exec failed: {}\n", std::strerror(errno));
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, message.data(), message.size());
  ::_exit(127);
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
  int out[2];
  int err[2];
  if (argv.empty() || ::pipe2(out, O_CLOEXEC) != 0) {
    result.problem = fmt::format("cannot start {}: {}", name, argv.empty() ? "no command" : std::strerror(errno));
    return result;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    result.problem = fmt::format("cannot start {}: {}", name, std::strerror(errno));
    ::close(out[0]), ::close(out[1]);
    return result;
  }
  const io::Fd out_read(out[0]), err_read(err[0]);
  std::vector<char*> args;
  for (const auto& word : argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  // Signals blocked across fork: a forwarded signal must not reach popdist run's handler in the child.
  sigset_t all, old_mask;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &old_mask);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(args, out[1], err[1], old_mask);
  const int fork_error = errno;
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::close(out[1]), ::close(err[1]);
  if (pid < 0) {
    result.problem = fmt::format("cannot start {}: fork failed: {}", name, std::strerror(fork_error));
    return result;
  }
  const auto deadline = Clock::now() + limit;
  const bool read_all = read_until(out_read.get(), err_read.get(), result, deadline);
  int status = 0;
  const bool ended = reap(pid, status, read_all ? deadline : Clock::now()) && read_all;
  if (!ended) {
    result.problem = fmt::format("{} did not end within {:.1f} s", name, std::chrono::duration<double>(limit).count());
    return result;
  }
  result.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  if (result.status == 127 && result.err.rfind("exec failed: ", 0) == 0) {
    result.problem = fmt::format("cannot start {}: {}", name, result.err.substr(13, result.err.find('\n') - 13));
    result.status = -1;
  }
  return result;
}

}  // namespace popdist::cli
