#pragma once
// An owned file descriptor, closed exactly once however the function that holds it returns, and
// making one non-blocking (for poll() loops): what every socket and pipe of a job's processes is
// held in.

#include <utility>

namespace popdist::cli::io {

/// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(), fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  /// Closes the descriptor (if any); errno is left as it was, so a failure can be reported after.
  void reset() noexcept;

 private:
  int fd_ = -1;
};

/// Sets O_NONBLOCK; throws std::system_error.
void set_nonblocking(int fd);

}  // namespace popdist::cli::io
