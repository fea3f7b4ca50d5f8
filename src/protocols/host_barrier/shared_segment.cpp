#include "protocols/host_barrier/shared_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

namespace popdist::detail {
namespace {

/// Names differ between segments of one process (a counter) and between processes of other pid
/// namespaces sharing /dev/shm (the clock); a name that exists anyway is skipped (O_EXCL).
/// Process-wide, not a set's state: the names must differ across every segment the process makes.
std::atomic<unsigned> g_segments{0};
constexpr int kNameAttempts = 8;

std::string failure(const char* what, const char* name, int error) {
  return fmt::format("{} of /dev/shm{} failed: {}", what, name, std::strerror(error));
}

}  // namespace

SharedSegment::~SharedSegment() {
  unlink();
  release();
}

std::string SharedSegment::create(std::size_t bytes) {
  int fd = -1;
  for (int attempt = 0; attempt < kNameAttempts && fd < 0; ++attempt) {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    fmt::format_to_n(name_, kNameSize - 1, "/popdist-{}-{}-{:x}", ::getpid(), g_segments.fetch_add(1), stamp);
    name_[kNameSize - 1] = '\0';
    fd = ::shm_open(name_, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return failure("shm_open", name_, errno);
  }
  if (fd < 0) return failure("shm_open", name_, EEXIST);
  named_ = true;
  // posix_fallocate, not ftruncate: a sparse file on a full tmpfs would map, then SIGBUS on first touch.
  if (const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    ::close(fd);
    unlink();
    return failure("posix_fallocate", name_, error);
  }
  return map(fd, bytes, "mmap");
}

std::string SharedSegment::open(const char* name, std::size_t bytes) {
  std::strncpy(name_, name, kNameSize - 1);
  const int fd = ::shm_open(name_, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return failure("shm_open", name_, errno);
  return map(fd, bytes, "mmap");
}

std::string SharedSegment::map(int fd, std::size_t bytes, const char* what) {
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  ::close(fd);
  if (base == MAP_FAILED) return failure(what, name_, error);
  base_ = base;
  bytes_ = bytes;
  return {};
}

void SharedSegment::unlink() noexcept {
  if (!named_) return;
  ::shm_unlink(name_);
  named_ = false;
}

void SharedSegment::release() noexcept {
  if (base_ == nullptr) return;
  ::munmap(base_, bytes_);
  base_ = nullptr;
}

}  // namespace popdist::detail
