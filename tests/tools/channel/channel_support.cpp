#include "channel_support.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>
#include <thread>

namespace channel_support {

bool eventually(const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

bool closed_by_peer(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char chunk[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd entry{fd, POLLIN, 0};
    if (poll(&entry, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t got = recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return true;
  }
}

bool still_open(int fd) {
  char byte = 0;
  const ssize_t got = recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
  return got > 0 || (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

std::optional<Message> JobPeer::next() {
  char chunk[4096];
  for (;;) {
    if (auto body = decoder.next_body()) return session.open(*body);
    const ssize_t got = recv(fd.get(), chunk, sizeof chunk, 0);
    if (got <= 0) return std::nullopt;
    decoder.feed(std::string_view(chunk, static_cast<std::size_t>(got)));
  }
}

JobPeer join(int port, const std::string& key, const std::string& host, std::vector<std::int32_t> instances,
             Role role) {
  Fd fd = raw_connect(port);
  auto session = shake_hands(fd.get(), key, host, role, std::move(instances), std::chrono::steady_clock::now() + 5s);
  if (!session) throw std::runtime_error("test: no Welcome from port " + std::to_string(port));
  return JobPeer{std::move(fd), std::move(*session), FrameDecoder()};
}

}  // namespace channel_support
