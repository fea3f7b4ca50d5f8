#include "whole_lines.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace popdist::cli {
namespace {

// A line longer than this is passed on in pieces (it would not fit one pipe write anyway).
constexpr std::size_t max_held = 1 << 16;

volatile sig_atomic_t child_pid = 0;

void forward_signal(int signal_number) {
  if (child_pid > 0) ::kill(child_pid, signal_number);
}

constexpr int forwarded_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

// One output stream of the program: what was read but is not yet a complete line.
struct Stream {
  int from = -1;  ///< read end of the program's pipe; -1 at end of file
  int to = -1;    ///< our own stdout or stderr
  std::string held;

  // Passes on every complete line in one write; keeps the rest (unless it grew too long).
  void pass_on_lines(bool at_end) {
    // A last line without its newline gets one: Open MPI would glue the next instance's tagged
    // output onto it.
    if (at_end && !held.empty() && held.back() != '\n') held += '\n';
    const std::size_t last_newline = held.rfind('\n');
    std::size_t upto = last_newline == std::string::npos ? 0 : last_newline + 1;
    if (held.size() >= max_held) upto = held.size();
    if (upto == 0) return;
    write_all(to, held.data(), upto);  // a closed stdout is the reader's choice: keep draining
    held.erase(0, upto);
  }

  void read_some() {
    char buffer[8192];
    const ssize_t got = ::read(from, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) {
      ::close(from);
      from = -1;
      pass_on_lines(true);
      return;
    }
    held.append(buffer, static_cast<std::size_t>(got));
    pass_on_lines(false);
  }
};

[[noreturn]] void exec_program(const std::vector<std::string>& program, int out, int err, pid_t parent) {
  // Die with the parent: if mpirun kills it with SIGKILL, no program is left behind.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(137);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& word : program) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int error = errno;
  std::fprintf(stderr, "popdist run: cannot start '%s': %s\n", program.front().c_str(), std::strerror(error));
  ::_exit(error == ENOENT ? 127 : 126);
}

}  // namespace

int run_with_whole_lines(const std::vector<std::string>& program) {
  if (program.empty()) {
    std::fprintf(stderr, "popdist %s: no program\n", whole_lines_command);
    return 2;
  }
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    std::perror("popdist run: pipe");
    return 1;
  }
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int signal_number : forwarded_signals) ::sigaction(signal_number, &action, nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("popdist run: fork");
    return 1;
  }
  if (pid == 0) exec_program(program, out_pipe[1], err_pipe[1], parent);
  child_pid = pid;
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  Stream streams[2] = {{out_pipe[0], STDOUT_FILENO, {}}, {err_pipe[0], STDERR_FILENO, {}}};
  ::signal(SIGPIPE, SIG_IGN);  // a reader that went away must not kill us before the program ends
  while (streams[0].from >= 0 || streams[1].from >= 0) {
    pollfd fds[2];
    for (int i = 0; i < 2; ++i) fds[i] = {streams[i].from, POLLIN, 0};  // a negative fd is ignored
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (streams[i].from >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) streams[i].read_some();
    }
  }

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    // End the same way, so that mpirun reports the signal it would have seen without us.
    const int signal_number = WTERMSIG(status);
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
    return 128 + signal_number;
  }
  return 1;
}

}  // namespace popdist::cli
