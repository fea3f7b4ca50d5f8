#pragma once
// What the channel's socket tests (and the agent's, tests/tools/agent) share: a server on loopback
// whose deliveries, error lines and closed hosts are collected under a lock and waited for, and a
// raw TCP peer for strangers.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "channel/secret.hpp"
#include "channel/server.hpp"
#include "channel/session.hpp"
#include "channel/handshake.hpp"
#include "channel/job_key.hpp"
#include "channel/sockets.hpp"
#include "io/fd.hpp"
#include "io/read_write.hpp"

namespace channel_support {

using namespace popdist::cli::channel;
using popdist::cli::io::Fd;
using popdist::cli::io::write_all;
using namespace std::chrono_literals;

class Collector {
 public:
  ServerCallbacks callbacks() {
    return {[this](Delivery delivery) { add([&] { deliveries_.push_back(std::move(delivery)); }); },
            [this](const std::string& line) { add([&] { errors_.push_back(line); }); },
            [this](const std::string& host) { add([&] { closed_.push_back(host); }); }};
  }
  /// Waits until `ready` holds (checked under the lock) or `timeout`; returns whether it held.
  bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, ready);
  }
  template <typename T>
  std::vector<Delivery> of_type() {
    std::lock_guard lock(mutex_);
    std::vector<Delivery> found;
    for (const auto& delivery : deliveries_)
      if (std::holds_alternative<T>(delivery.message)) found.push_back(delivery);
    return found;
  }
  /// Deliveries of type T (that `match`); call inside wait_until, which holds the lock.
  template <typename T>
  std::size_t count_locked(const std::function<bool(const T&)>& match = {}) const {
    std::size_t count = 0;
    for (const auto& delivery : deliveries_)
      if (const T* message = std::get_if<T>(&delivery.message)) count += !match || match(*message) ? 1 : 0;
    return count;
  }
  /// Every delivery so far, of any type.
  std::size_t delivered() {
    std::lock_guard lock(mutex_);
    return deliveries_.size();
  }
  std::vector<std::string> errors() {
    std::lock_guard lock(mutex_);
    return errors_;
  }
  std::size_t error_count_locked() const { return errors_.size(); }

 private:
  void add(const std::function<void()>& change) {
    { std::lock_guard lock(mutex_); change(); }
    changed_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Delivery> deliveries_;
  std::vector<std::string> errors_;
  std::vector<std::string> closed_;
};

/// A server on 127.0.0.1 (`port` 0: the kernel picks; another: popdist run back on the port it had).
struct TestServer {
  explicit TestServer(std::chrono::milliseconds hello_deadline = 2000ms, std::size_t max_unauthenticated = 64,
                      std::string job_secret = make_secret(), int port = 0)
      : secret(std::move(job_secret)),
        server(ServerOptions{"127.0.0.1", port, secret, hello_deadline, max_unauthenticated}, collector.callbacks()) {}
  std::string secret;
  std::string tag = make_job_tag();  ///< the job's, in socket names; unique per test
  Collector collector;
  Server server;
};

/// A raw TCP connection to the test server.
inline Fd raw_connect(int port) { return connect_tcp("127.0.0.1", port, std::chrono::steady_clock::now() + 5s); }

/// Whether `ready` holds within `timeout`, checked every few milliseconds (for state that the
/// collector does not see change).
bool eventually(const std::function<bool()>& ready, std::chrono::milliseconds timeout = 10s);

/// Whether the peer closed `fd` within `timeout` (whatever it sent before is skipped).
bool closed_by_peer(int fd, std::chrono::milliseconds timeout);

/// Whether `fd` is still open at the peer's end now: nothing to read, or bytes (not a close).
bool still_open(int fd);

/// A raw peer of the job: a blocking socket and its session, after the handshake (handshake.hpp).
struct JobPeer {
  Fd fd;
  Session session;
  /// The message sealed (its tag and sequence number) and written whole.
  [[nodiscard]] bool send(const Message& message) { return write_all(fd.get(), session.seal(message)); }
  /// The next message from the other end, opened by the session; nullopt when it closed.
  [[nodiscard]] std::optional<Message> next();
  FrameDecoder decoder;
};

/// A relay's connection to `port`, its handshake done with `key`; fails the test otherwise.
JobPeer join(int port, const std::string& key, const std::string& host, std::vector<std::int32_t> instances,
             Role role = Role::kRelay);

}  // namespace channel_support
