#pragma once
// The channel as an instance's agent sees it: connect() elects the host's relay without
// coordination -- each agent tries to bind the abstract Unix socket named from the job (its
// random tag, job_key.hpp) and the host; the one that binds is the relay (relay.hpp) and connects to
// `popdist run`, the others connect to it -- then the agent sends what it knows and gets
// Requests back. The host's beat goes out from its relay at a steady interval, not from each
// agent. When the relay goes away, the agents left elect another one (the same way) and say
// Hello again.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "channel/frame.hpp"
#include "channel/secret.hpp"

namespace popdist::cli::channel {

/// `host:port` of popdist run's channel (IPv6 as `[address]:port`).
inline constexpr const char* kAddressVariable = "POPDIST_CHANNEL_ADDRESS";
/// The host name the relay is elected under, when not the machine's (fake hosts in tests).
inline constexpr const char* kHostVariable = "POPDIST_CHANNEL_HOST";
/// The host's beat interval in ms when not the default 1000 (0: none); for the benchmark of its cost.
inline constexpr const char* kBeatVariable = "POPDIST_CHANNEL_BEAT_MS";

struct ClientOptions {
  std::string secret;  ///< the job's key, 64 hex digits: proven, never sent (session.hpp)
  std::string tag;     ///< the job's tag in the relays' socket names (job_key.hpp)
  std::string server_address;
  int server_port = 0;
  std::string host;  ///< "" = gethostname()
  std::int32_t instance = 0;
  /// The host's beat, if this agent is its relay; and how often an agent looks at its own relay.
  std::chrono::milliseconds beat_interval{1000};
  std::chrono::milliseconds connect_timeout{30000};
  std::chrono::milliseconds hello_deadline{2000};
  /// How long a relay whose own agent is done waits for its host's other agents to finish.
  std::chrono::milliseconds relay_linger{60000};
  std::function<void(const std::string& line)> on_error;  ///< default: stderr
};

/// The options from the job key's variables (job_key.hpp: the nonce, and the key file or the
/// secret), kAddressVariable and (optional) kHostVariable; throws std::invalid_argument naming the
/// variable or file, its value (never the key's) and what was expected.
[[nodiscard]] ClientOptions client_options_from_environment(const EnvironmentLookup& lookup, std::int32_t instance);

/// The abstract Unix socket (io/unix_socket.hpp) the relay of `host` listens on for the job
/// tagged `tag`: `@popdist-channel/<job tag>/<host>`.
[[nodiscard]] std::string relay_socket_name(std::string_view tag, const std::string& host);

class Client {
 public:
  /// Elects or finds the host's relay and says Hello; throws std::runtime_error when no relay
  /// is reached by `connect_timeout`.
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Called on the client's thread (or its relay's) for each Request naming this instance.
  void on_request(std::function<void(const Request&)> callback);

  // Each returns false when the channel is lost and no new relay could be reached.
  bool send_started(std::int64_t pid);
  /// `status` as a shell reports it; `ended_at` on this machine's steady clock (sent as an age).
  bool send_ended(int status, std::chrono::steady_clock::time_point ended_at, std::string_view error_text,
                  ErrorSource source = ErrorSource::kStderr);
  bool send_activity(std::chrono::steady_clock::time_point last_output);
  /// A faulthandler dump of process `pid` (0: no Python hook); cut to fit a frame, keeping its
  /// head (the innermost frames first).
  bool send_stack_dump(std::string_view text, std::int64_t pid = 0, std::uint64_t main_thread = 0);

  [[nodiscard]] bool is_relay() const;
  /// Done: a relay then lingers for its host's other agents (relay_linger), beating while any is
  /// connected. An agent that sent an Ended first makes sure its relay read it (client.cpp), else
  /// sends it again through the host's next relay.
  void close() noexcept;
  /// The same with a linger of its own: 0 when this process must end now (its program failed and
  /// mpirun learns it only from our exit); the host's other agents then elect another relay.
  void close(std::chrono::milliseconds linger) noexcept;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace popdist::cli::channel
