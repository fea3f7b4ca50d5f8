#pragma once
// One peer of a poll() loop (the server's relays, a relay's local agents, a relay's link up): a
// non-blocking socket, its frame decoder and its output buffer, and what its Hello said. The loop
// both ends share (peer_loop.hpp) accepts strangers: a peer is trusted only after a valid Hello
// (authenticate()), must send it before its deadline, and its input is bounded by the decoder's
// frame limit plus one read.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "channel/frame.hpp"
#include "channel/secret.hpp"
#include "io/fd.hpp"

namespace popdist::cli::channel {

using SteadyTime = std::chrono::steady_clock::time_point;

class Connection {
 public:
  Connection(io::Fd fd, std::string peer, SteadyTime hello_deadline);

  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] const std::string& peer() const { return peer_; }

  /// Reads what is there (one read of up to 64 KiB) and appends the messages it completes.
  /// False when the peer closed; throws FrameError on bad input.
  [[nodiscard]] bool read_available(std::vector<Message>& messages);
  /// Queues a frame; written by flush() when the socket takes it.
  void queue(const std::string& frame) { output_ += frame; }
  /// Writes what the socket takes now; false when the peer is gone.
  [[nodiscard]] bool flush();
  [[nodiscard]] std::size_t pending_output() const { return output_.size(); }

  /// Checks the first message: a Hello with `secret` and (when given) `role`. On success the
  /// connection is authenticated and takes the Hello's host and instances; otherwise throws
  /// FrameError saying what was wrong (never the secret).
  void authenticate(const Message& first, const std::string& secret, std::optional<Role> role);

  bool authenticated = false;
  SteadyTime hello_deadline;
  std::string host;
  std::vector<std::int32_t> instances;
  std::uint64_t bytes_received = 0;

 private:
  io::Fd fd_;
  std::string peer_;
  FrameDecoder decoder_;
  std::string output_;
};

/// "address:port" of a TCP peer, "local pid <p> (uid <u>)" of a Unix one.
[[nodiscard]] std::string describe_peer(int fd);

}  // namespace popdist::cli::channel
