#pragma once
// One peer of a poll() loop (the server's relays, a relay's local agents, a relay's link up): a
// non-blocking socket, its frame decoder, its session (session.hpp: the handshake, then every
// frame sealed and checked) and its output buffer, and what its Hello said. The loop both ends
// share (peer_loop.hpp) accepts strangers: a peer is trusted only after its Hello was answered and
// its Proof matched, both before its deadline, and its input is bounded by the decoder's frame
// limit plus one read.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "channel/frame.hpp"
#include "channel/secret.hpp"
#include "channel/session.hpp"
#include "io/fd.hpp"

namespace popdist::cli::channel {

using SteadyTime = std::chrono::steady_clock::time_point;

class Connection {
 public:
  /// `session`: fresh (accepting end) or established by a handshake (connecting end).
  Connection(io::Fd fd, std::string peer, SteadyTime hello_deadline, Session session);

  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] const std::string& peer() const { return peer_; }
  [[nodiscard]] const Session& session() const { return session_; }

  /// Reads what is there (one read of up to 64 KiB) and appends the messages it completes, each
  /// opened by the session. False when the peer closed; throws FrameError on bad input (a
  /// HandshakeError for a failed handshake).
  [[nodiscard]] bool read_available(std::vector<Message>& messages);
  /// Queues a message, sealed by the session (established); written by flush() when the socket takes it.
  void send(const Message& message) { output_ += session_.seal(message); }
  /// Writes what the socket takes now; false when the peer is gone.
  [[nodiscard]] bool flush();
  [[nodiscard]] std::size_t pending_output() const { return output_.size(); }

  /// The accepting end, after the peer's Hello was read: when it names `role` (if given), queues
  /// the Welcome (the session's nonce and proof); otherwise throws HandshakeError.
  void answer(std::optional<Role> role);
  /// After the peer's Proof matched (open() checked it): the connection is authenticated and
  /// takes the Hello's host and instances.
  void accept();

  bool authenticated = false;
  SteadyTime hello_deadline;
  std::string host;
  std::vector<std::int32_t> instances;
  std::uint64_t bytes_received = 0;

 private:
  io::Fd fd_;
  std::string peer_;
  FrameDecoder decoder_;
  Session session_;
  std::string output_;
};

/// "address:port" of a TCP peer, "local pid <p> (uid <u>)" of a Unix one.
[[nodiscard]] std::string describe_peer(int fd);

}  // namespace popdist::cli::channel
