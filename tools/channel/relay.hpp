#pragma once
// A host's relay: the one agent of a host that won the election (client.hpp) holds the host's
// one TCP connection to `popdist run`, and forwards the frames of its host's other agents (which
// reach it on an abstract Unix socket) up, and Requests down to the agent they name. So
// `popdist run` has one connection per host, not per instance. It serves its agents with the
// poll() loop popdist run's server runs too (peer_loop.hpp). Locals must prove the job's key
// too (session.hpp: any local process can reach an abstract socket) and run as the same user; the
// relay vouches for them upward, inside its own authenticated connection.
// When its own agent is done, the relay lingers until its host's other agents have closed their
// connections (bounded); after that they elect a new relay among themselves. The relay beats for
// its host (a Beat for kHostBeat, every beat_interval) while any of its agents lives -- its own,
// or a local one still connected: one Beat per host reaches `popdist run`, not one per agent.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "channel/frame.hpp"
#include "channel/peer_loop.hpp"  // PeerStats
#include "io/fd.hpp"

namespace popdist::cli::channel {

struct RelayOptions {
  std::string secret;  ///< the job's key, 64 hex digits: proven, never sent (session.hpp)
  std::string host;
  std::string server_address;
  int server_port = 0;
  std::vector<std::int32_t> instances;  ///< those of the relay's own agent
  std::chrono::milliseconds hello_deadline{2000};
  /// Local connections without a Hello yet (same user only); a host's agents connect at once.
  /// Beyond it the oldest of them is dropped, as at popdist run's server (peer_loop.hpp).
  std::size_t max_unauthenticated = 4096;
  std::chrono::steady_clock::time_point connect_deadline;
  std::chrono::milliseconds beat_interval{1000};
};

struct RelayCallbacks {
  std::function<void(const Request&)> on_own_request;    ///< a Request for the relay's own agent
  std::function<void(const std::string& line)> on_error;
};

class Relay {
 public:
  /// Takes the listening socket that won the election, connects to `popdist run` and waits for
  /// its Welcome (retrying until the deadline; throws std::runtime_error naming the address),
  /// then serves on its own thread.
  Relay(io::Fd listener, RelayOptions options, RelayCallbacks callbacks);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  /// Sends a message of the relay's own agent (any thread).
  void send(Message message);
  /// False once the connection to `popdist run` is lost (the relay has then stopped).
  [[nodiscard]] bool alive() const;
  [[nodiscard]] std::size_t local_agents() const;
  [[nodiscard]] PeerStats stats() const;
  /// Lingers until every local agent has closed its connection and everything is sent, at most
  /// `linger`, then stops. Idempotent; the destructor stops without lingering.
  void finish(std::chrono::milliseconds linger) noexcept;

  class Loop;

 private:
  std::unique_ptr<Loop> loop_;
};

}  // namespace popdist::cli::channel
