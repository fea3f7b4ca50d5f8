#include "channel/sockets.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace popdist::cli::channel {
namespace {

[[noreturn]] void throw_errno(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() { if (head) freeaddrinfo(head); }
};

void resolve(const std::string& address, int port, bool passive, AddressList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string service = std::to_string(port);
  const int error = getaddrinfo(address.empty() ? nullptr : address.c_str(), service.c_str(), &hints, &out.head);
  if (error != 0)
    throw std::invalid_argument("channel address '" + address + "': " + gai_strerror(error) +
                                ", expected a host name or an IP address");
}

sockaddr_un abstract_address(const std::string& name, socklen_t& length) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof(address.sun_path))
    throw std::invalid_argument("abstract socket name of " + std::to_string(name.size()) + " bytes, expected at most " +
                                std::to_string(sizeof(address.sun_path) - 1));
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return address;
}

}  // namespace

void Fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void set_nonblocking(int fd) {
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) throw_errno("fcntl O_NONBLOCK");
}

Fd listen_tcp(const std::string& address, int port) {
  AddressList list;
  resolve(address, port, true, list);
  int last_errno = 0;
  for (addrinfo* ai = list.head; ai; ai = ai->ai_next) {
    Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) continue;
    const int yes = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (bind(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd.get(), SOMAXCONN) == 0) return fd;
    last_errno = errno;
  }
  errno = last_errno;
  throw_errno("channel: listen on '" + address + "' port " + std::to_string(port));
}

int local_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) throw_errno("getsockname");
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

Fd connect_tcp(const std::string& address, int port, std::chrono::steady_clock::time_point deadline) {
  AddressList list;
  resolve(address, port, false, list);
  for (auto pause = std::chrono::milliseconds(10);; pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    for (addrinfo* ai = list.head; ai; ai = ai->ai_next) {
      Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
      if (fd.valid() && connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return fd;
    }
    if (std::chrono::steady_clock::now() + pause > deadline)
      throw_errno("channel: connect to popdist run at '" + address + "' port " + std::to_string(port));
    std::this_thread::sleep_for(pause);
  }
}

Fd listen_abstract(const std::string& name) {
  socklen_t length = 0;
  const sockaddr_un address = abstract_address(name, length);
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw_errno("socket(AF_UNIX)");
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    if (errno == EADDRINUSE) return Fd();
    throw_errno("bind the host's relay socket");
  }
  if (listen(fd.get(), SOMAXCONN) != 0) throw_errno("listen on the host's relay socket");
  return fd;
}

Fd connect_abstract(const std::string& name) {
  socklen_t length = 0;
  const sockaddr_un address = abstract_address(name, length);
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw_errno("socket(AF_UNIX)");
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) return Fd();
  return fd;
}

uid_t peer_uid(int fd) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return static_cast<uid_t>(-1);
  return credentials.uid;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

WakeUp::WakeUp() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!fd_.valid()) throw_errno("eventfd");
}

void WakeUp::signal() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = write(fd_.get(), &one, sizeof one);
}

void WakeUp::drain() noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t got = read(fd_.get(), &count, sizeof count);
}

}  // namespace popdist::cli::channel
