#pragma once
// The few POSIX socket calls the channel needs, each with its error named: a file descriptor that
// closes itself, TCP listen/connect (IPv4 or IPv6, via getaddrinfo), Unix sockets in the abstract
// namespace (no file to clean up, gone when the process is), the peer's uid, and a wake-up
// eventfd for poll() loops that other threads hand work to.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

namespace popdist::cli::channel {

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
  void reset() noexcept;

 private:
  int fd_ = -1;
};

void set_nonblocking(int fd);

/// A listening TCP socket on `address` ("" = every address) and `port` (0 = the kernel picks);
/// throws std::system_error / std::invalid_argument naming the address.
[[nodiscard]] Fd listen_tcp(const std::string& address, int port);
/// The port a bound socket listens on.
[[nodiscard]] int local_port(int fd);
/// A blocking TCP connection to `address`:`port`, retried until `deadline` while refused; throws.
[[nodiscard]] Fd connect_tcp(const std::string& address, int port, std::chrono::steady_clock::time_point deadline);

/// Binds and listens on the abstract Unix socket `name`; an invalid Fd when the name is taken.
[[nodiscard]] Fd listen_abstract(const std::string& name);
/// Connects to the abstract Unix socket `name`; an invalid Fd when nobody listens there.
[[nodiscard]] Fd connect_abstract(const std::string& name);
/// The uid of the process at the other end of a Unix socket (SO_PEERCRED); -1 if unknown.
[[nodiscard]] uid_t peer_uid(int fd);

/// Writes all of `bytes` to a blocking socket (no SIGPIPE); false when the peer is gone.
[[nodiscard]] bool write_all(int fd, std::string_view bytes);

/// An eventfd: any thread signals, the poll() loop that watches fd() drains.
class WakeUp {
 public:
  WakeUp();
  void signal() noexcept;
  void drain() noexcept;
  [[nodiscard]] int fd() const { return fd_.get(); }

 private:
  Fd fd_;
};

}  // namespace popdist::cli::channel
