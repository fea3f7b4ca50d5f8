#include "channel/connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "io/unix_socket.hpp"

namespace popdist::cli::channel {
namespace {
constexpr std::size_t kReadChunk = 64 * 1024;
}  // namespace

Connection::Connection(io::Fd fd, std::string peer, SteadyTime deadline, Session session)
    : hello_deadline(deadline), fd_(std::move(fd)), peer_(std::move(peer)), session_(std::move(session)) {}

bool Connection::read_available(std::vector<Message>& messages) {
  char chunk[kReadChunk];
  const ssize_t got = recv(fd_.get(), chunk, sizeof chunk, 0);
  if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  if (got == 0) return false;
  bytes_received += static_cast<std::uint64_t>(got);
  decoder_.feed(std::string_view(chunk, static_cast<std::size_t>(got)));
  // One frame at a time: the Proof that ends the handshake may share a read with sealed frames.
  while (auto body = decoder_.next_body()) messages.push_back(session_.open(*body));
  return true;
}

bool Connection::flush() {
  while (!output_.empty()) {
    const ssize_t sent = ::send(fd_.get(), output_.data(), output_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    output_.erase(0, static_cast<std::size_t>(sent));
  }
  return true;
}

void Connection::answer(std::optional<Role> role) {
  const auto& hello = session_.peer_hello();
  if (!hello) throw HandshakeError("no Hello to answer");
  if (role && hello->role != *role)
    throw HandshakeError(std::string("Hello from a ") + (hello->role == Role::kRelay ? "relay" : "agent") +
                         ", expected " + (*role == Role::kRelay ? "a relay" : "an agent"));
  output_ += session_.answer();
}

void Connection::accept() {
  if (!session_.established()) throw HandshakeError("accepted before its Proof");
  authenticated = true;
  host = session_.peer_hello()->host;
  instances = session_.peer_hello()->instances;
}

std::string describe_peer(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "an unknown peer";
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(v4->sin_port));
  }
  if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  const io::PeerCredentials credentials = io::peer_credentials(fd);
  return "local pid " + std::to_string(credentials.pid) + " (uid " + std::to_string(credentials.uid) + ")";
}

}  // namespace popdist::cli::channel
