#pragma once
// The channel's end in `popdist run`: a TCP listener served by the poll() loop both ends share
// (peer_loop.hpp), on its own thread. Every connection must prove the job's key (session.hpp:
// Hello, Welcome, Proof; the key never sent) within a deadline, or is closed, and every frame
// after that carries its tag; one relay per host (a second claim is refused). The connections
// still in their handshake are capped (the oldest makes room), so a flood of strangers cannot use
// up the descriptors and the loop that the job's relays need. Bad input from anyone ends that connection with one error line, never the
// server. Decoded messages go to a callback with the host that sent them and their arrival on
// this machine's steady clock; Requests go down to the host that speaks for the instance.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "channel/frame.hpp"
#include "channel/peer_loop.hpp"  // PeerStats

namespace popdist::cli::channel {

struct ServerOptions {
  std::string address;  ///< where to listen; "" = every address
  int port = 0;         ///< 0 = the kernel picks (see Server::port())
  std::string secret;  ///< the job's key, 64 hex digits (secret.hpp); only proven, never sent
  std::chrono::milliseconds hello_deadline{2000};
  /// Connections without a Hello yet; beyond it the oldest of them is dropped (its relay
  /// retries). The launcher sets at least its number of hosts: they all connect at start.
  std::size_t max_unauthenticated = 256;
};

/// A message as it arrived: the host its connection's Hello named, and when (steady clock).
struct Delivery {
  std::string host;
  std::chrono::steady_clock::time_point arrived;
  Message message;  ///< a Hello's nonce is blanked
};

struct ServerCallbacks {
  std::function<void(Delivery)> on_message;                 ///< on the server's thread
  std::function<void(const std::string& line)> on_error;    ///< one line per refused peer
  std::function<void(const std::string& host)> on_closed;   ///< an authenticated connection ended
};

class Server {
 public:
  /// Listens and starts the thread; throws std::system_error when it cannot listen.
  Server(ServerOptions options, ServerCallbacks callbacks);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  [[nodiscard]] int port() const;
  /// Asks `instance` (or kAllInstances) to dump its stacks, through its host's connection; each
  /// agent waits at most `wait` for its program's dump.
  void request_stacks(std::int32_t instance, std::chrono::milliseconds wait = std::chrono::seconds(5));
  [[nodiscard]] PeerStats stats() const;
  /// Ends the thread and closes every connection; idempotent, and what the destructor does.
  void stop() noexcept;

  class Loop;

 private:
  std::unique_ptr<Loop> loop_;
};

}  // namespace popdist::cli::channel
