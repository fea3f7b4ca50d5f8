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

#include "instance_status.hpp"

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

  /// The last character passed on: after a return or a newline the terminal's cursor is at the
  /// start of a line, where a return changes nothing (see write_segments).
  char last_passed = '\n';

  // Passes on every complete line, and every progress update at once: programs draw progress in
  // place with carriage returns, as `text\r` (C's printf) or `\rtext` (tqdm, Lightning's bar); the
  // line they draw on may never end. Keeps the rest of a line that is still being written (unless
  // it grew too long).
  void pass_on_lines(bool at_end) {
    // A last line without its newline gets one, as does progress left drawn: Open MPI would glue
    // the next instance's tagged output onto it.
    if (at_end && !held.empty() && held.back() != '\n') held += '\n';
    if (at_end && held.empty() && last_passed == '\r') held = "\n";
    const std::size_t last_newline = held.rfind('\n');
    const std::size_t last_return = held.rfind('\r');
    std::size_t upto = last_newline == std::string::npos ? 0 : last_newline + 1;
    const bool drawing = last_return != std::string::npos &&
                         (last_newline == std::string::npos || last_return > last_newline);
    if (drawing || held.size() >= max_held) upto = held.size();
    if (upto == 0) return;
    write_segments(upto, drawing);
    held.erase(0, upto);
  }

  // Open MPI tags the start of each piece it reads (and after each newline, never after a
  // return). So each update is one write that ends in a return, and an update written as
  // `\rtext` is passed on as `text\r`: its leading return, coming where the cursor is already at
  // the start of the line, is skipped. The tag then starts each update on the terminal instead
  // of being overwritten by it, and updates written at once stay separately tagged pieces. Runs
  // of whole lines stay one write; "\r\n" is a line end.
  void write_segments(std::size_t upto, bool drawing) {
    std::string piece;
    auto pass = [&] {
      write_all(to, piece.data(), piece.size());  // a closed stdout is the reader's choice: keep draining
      last_passed = piece.back();
      piece.clear();
    };
    for (std::size_t i = 0; i < upto; ++i) {
      const char c = held[i];
      if (c == '\r' && !(i + 1 < upto && held[i + 1] == '\n')) {
        if (piece.empty() && (last_passed == '\r' || last_passed == '\n')) continue;
        piece += c;
        pass();
        continue;
      }
      piece += c;
    }
    if (piece.empty()) return;
    // The update being drawn (text after a return, no newline yet): passed on now, with the return
    // the program writes before its next update (skipped then).
    if (drawing && piece.back() != '\n') piece += '\r';
    pass();
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

int run_with_whole_lines(const std::vector<std::string>& program, const std::string& status_file) {
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
  if (!status_file.empty()) record_instance_status(status_file, shell_status(status));
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
