// wait_until_output_is_read (output_drain.hpp): the kernel counts the bytes still in a pipe
// (FIONREAD), a socket's send queue (SIOCOUTQ) or a terminal's output queue (TIOCOUTQ); the
// instance sleeps in 2 ms steps until both streams are empty or the time is up. Other kinds of
// file (a regular file, /dev/null) hold nothing back and are not waited for.
//
// A pipe or socket that is empty has reached its reader, but that reader is usually a relay
// (slurmstepd, Open MPI's daemon) that forwards the bytes over another connection to the
// launcher, while the abort takes a path of its own. Once the abort reaches srun, srun ends the
// step and what was still on its way is lost: seen once in CI, where srun printed neither the
// aborting instance's traceback nor anything else it wrote last (Open MPI's MPI_ABORT banner, the
// other node's "CANCELLED" line), although the pipe had been read. So the instance gives the relay
// a moment more when its output goes to a pipe or socket.
#include "runtime/output_drain.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace popdist::detail {
namespace {

bool is_pipe_or_socket(int fd) noexcept {
  struct stat info {};
  return fstat(fd, &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode));
}

/// Bytes written to `fd` that its reader has not taken yet; 0 when unknown.
int unread_bytes(int fd) noexcept {
  struct stat info {};
  if (fstat(fd, &info) != 0) return 0;
  unsigned long request = 0;  // NOLINT(google-runtime-int): ioctl's request type
  if (S_ISFIFO(info.st_mode)) {
    request = FIONREAD;
  } else if (S_ISSOCK(info.st_mode)) {
    request = SIOCOUTQ;
  } else if (S_ISCHR(info.st_mode) && isatty(fd) == 1) {
    request = TIOCOUTQ;
  } else {
    return 0;
  }
  int count = 0;
  return ioctl(fd, request, &count) == 0 ? count : 0;
}

}  // namespace

void wait_until_output_is_read(double max_seconds, double relay_seconds) noexcept {
  std::fflush(stdout);
  std::fflush(stderr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_seconds);
  while ((unread_bytes(STDOUT_FILENO) > 0 || unread_bytes(STDERR_FILENO) > 0) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (is_pipe_or_socket(STDOUT_FILENO) || is_pipe_or_socket(STDERR_FILENO)) {
    std::this_thread::sleep_for(std::chrono::duration<double>(relay_seconds));
  }
}

}  // namespace popdist::detail
