#include "io/wake_up.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace popdist::cli::io {

WakeUp::WakeUp() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!fd_.valid()) throw std::system_error(errno, std::generic_category(), "eventfd");
}

void WakeUp::signal() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(fd_.get(), &one, sizeof one);
}

void WakeUp::drain() noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t got = ::read(fd_.get(), &count, sizeof count);
}

}  // namespace popdist::cli::io
