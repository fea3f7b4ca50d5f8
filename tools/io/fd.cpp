#include "io/fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace popdist::cli::io {

void Fd::reset() noexcept {
  if (fd_ < 0) return;
  const int error = errno;
  ::close(fd_);
  fd_ = -1;
  errno = error;
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    throw std::system_error(errno, std::generic_category(), "fcntl O_NONBLOCK");
}

}  // namespace popdist::cli::io
