#include "channel/sockets.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
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

}  // namespace

io::Fd listen_tcp(const std::string& address, int port) {
  AddressList list;
  resolve(address, port, true, list);
  int last_errno = 0;
  for (addrinfo* ai = list.head; ai; ai = ai->ai_next) {
    io::Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
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

io::Fd connect_tcp(const std::string& address, int port, std::chrono::steady_clock::time_point deadline) {
  AddressList list;
  resolve(address, port, false, list);
  for (auto pause = std::chrono::milliseconds(10);; pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    for (addrinfo* ai = list.head; ai; ai = ai->ai_next) {
      io::Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
      if (fd.valid() && connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return fd;
    }
    if (std::chrono::steady_clock::now() + pause > deadline)
      throw_errno("channel: connect to popdist run at '" + address + "' port " + std::to_string(port));
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace popdist::cli::channel
