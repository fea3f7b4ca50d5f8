#include "reach/connect_back.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "io/fd.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// One connect() to `ai`, waited for until `deadline`; 0 on success, else an errno (ETIMEDOUT).
int connect_once(const addrinfo& ai, Clock::time_point deadline) {
  io::Fd fd(::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai.ai_protocol));
  if (!fd.valid()) return errno;
  if (::connect(fd.get(), ai.ai_addr, ai.ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd watched{fd.get(), POLLOUT, 0};
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (::poll(&watched, 1, static_cast<int>(std::max<long long>(left, 0))) <= 0) return ETIMEDOUT;
  int error = 0;
  socklen_t size = sizeof error;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
  return error;
}

}  // namespace

std::string connect_back(const std::string& address, int port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int looked_up = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (looked_up != 0) return "address '" + address + "': " + ::gai_strerror(looked_up);
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, &::freeaddrinfo);
  // Only a refusal is retried (a firewall's REJECT; the server listens before any launcher
  // starts): no route (a link down) is the answer at once, and a timeout used up the time.
  int error = 0;
  while (true) {
    for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
      error = connect_once(*ai, deadline);
      if (error == 0) return "";
    }
    if (error != ECONNREFUSED || Clock::now() + std::chrono::milliseconds(100) > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::string("connect: ") + std::strerror(error);
}

}  // namespace popdist::cli
