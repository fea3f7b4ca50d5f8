#include "io/read_write.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace popdist::cli::io {
namespace {

using Clock = std::chrono::steady_clock;

/// Milliseconds until `deadline`, rounded up (a poll that wakes a little early would spin).
int poll_ms(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

}  // namespace

bool write_all(int fd, std::string_view bytes) {
  bool socket = true;  // until the descriptor says it is not one: one failed send, then writes
  while (!bytes.empty()) {
    const ssize_t written = socket ? ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL)
                                   : ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && socket && errno == ENOTSOCK) {
      socket = false;
      continue;
    }
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

long read_by(int fd, char* buffer, std::size_t size, Clock::time_point deadline) {
  for (;;) {
    pollfd entry{fd, POLLIN, 0};
    const int ready = ::poll(&entry, 1, poll_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return -1;
    if (ready == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    const ssize_t got = ::read(fd, buffer, size);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    return static_cast<long>(got);
  }
}

}  // namespace popdist::cli::io
