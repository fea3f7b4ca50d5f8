#pragma once
// The poll() loop both ends of the channel run -- popdist run's server (its peers: the hosts'
// relays, over TCP) and each host's relay (its peers: the host's other agents, over an abstract
// Unix socket) -- written once: the listener and the table of peers, the handshake (session.hpp:
// a Hello, a Welcome, a Proof of the job's key) that every peer must finish before a deadline, the cap on peers still waiting to send it,
// one error line per peer refused, and the wake-up by which other threads hand work in. An end
// (its Owner) supplies only what differs: what its peers' messages mean, and the relay's link up.
//
// Over the cap, the **oldest** peer still waiting for its Hello is dropped to make room. A flood
// must then outpace a Hello's round trip to starve the job's own peers, where refusing newcomers
// would let a few idle connections, renewed every deadline, lock them out for good (a relay
// retries popdist run until its connect_timeout, an agent its host's relay likewise). A flood is
// reported once a second with its count so far, not once per connection.

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "channel/frame.hpp"
#include "io/fd.hpp"
#include "io/wake_up.hpp"

namespace popdist::cli::channel {

class Connection;

struct PeerLoopOptions {
  std::string secret;  ///< the job's key (64 hex digits): never sent, only proven (session.hpp)
  /// The role a peer's Hello must name; nullopt: any (popdist run hears relays, and the agents
  /// they forward).
  std::optional<Role> role;
  std::chrono::milliseconds hello_deadline{2000};
  /// Peers without a Hello yet; beyond it the oldest of them is dropped.
  std::size_t max_unauthenticated = 256;
  /// Who speaks in the error lines, after "channel: ": "" (popdist run) or "host <h>'s relay ".
  std::string speaker;
  /// Where the error lines go (on the loop's thread, no lock held: it may call stats()).
  std::function<void(const std::string& line)> on_error;
};

/// What a loop did with its peers (for the tests and the scale probe); any thread may read it.
struct PeerStats {
  std::uint64_t accepted = 0;
  std::uint64_t authenticated = 0;
  std::uint64_t refused_over_cap = 0;  ///< dropped to make room: too many without a Hello
  std::uint64_t refused_hello = 0;     ///< a failed handshake: a wrong Proof, a wrong role, not a Hello first, refused by the owner
  std::uint64_t refused_input = 0;     ///< garbage or oversized frames, a frame that only goes down
  std::uint64_t timed_out = 0;         ///< no Hello before the deadline
  std::uint64_t open_authenticated = 0;
  std::uint64_t bytes_received = 0;
};

class PeerLoop {
 public:
  using PeerId = std::uint64_t;
  using Peers = std::map<PeerId, std::unique_ptr<Connection>>;
  using Clock = std::chrono::steady_clock;

  /// What differs between the two ends. Every call comes on the loop's thread.
  class Owner {
   public:
    virtual ~Owner() = default;
    /// Whether a new peer may stay at all, before its Hello (the relay: its own user only).
    virtual bool admit(int fd) { return (void)fd, true; }
    /// A peer finished the handshake (its Hello answered, its Proof matched). Throwing
    /// FrameError refuses it (a second relay for a host already connected).
    virtual void welcomed(PeerId id, Connection& peer, Message hello) = 0;
    /// A later message of a welcomed peer, never a Request or a Welcome (those only go down, and
    /// drop the peer that sends one up). Throwing FrameError drops the peer with that error.
    virtual void received(PeerId id, Connection& peer, Message message) = 0;
    /// A peer goes, welcomed or not (not when the loop stops: its peers just close).
    virtual void leaving(PeerId id, const Connection& peer) { (void)id, (void)peer; }
    /// Before each poll, also after a wake(): take the other threads' work. False ends the loop.
    virtual bool before_poll() { return true; }
    /// One more descriptor to poll besides the peers (the relay's link up); fd -1: none.
    [[nodiscard]] virtual pollfd upstream() const { return {-1, 0, 0}; }
    virtual void upstream_ready(short revents) { (void)revents; }
    /// Whether to read the peers now (false: the relay's backpressure).
    [[nodiscard]] virtual bool reading() const { return true; }
    /// When to look again at the latest, given the loop's own `next` (the relay's linger).
    [[nodiscard]] virtual Clock::time_point next_look(Clock::time_point next) const { return next; }
    /// The loop ended (before_poll(), stop()); its listener and peers close after this returns.
    virtual void stopped() {}
  };

  /// Serves `listener` (made non-blocking) for `owner` once started; throws std::system_error.
  PeerLoop(io::Fd listener, PeerLoopOptions options, Owner& owner);
  /// stop(); the owner must outlive the thread, so it stops its loop first.
  ~PeerLoop();
  PeerLoop(const PeerLoop&) = delete;
  PeerLoop& operator=(const PeerLoop&) = delete;

  // Any thread.
  void start();
  /// Makes the loop call before_poll() soon.
  void wake() noexcept { wake_.signal(); }
  /// Waits for the loop to end by itself (before_poll() returning false).
  void join() noexcept;
  /// Ends the loop and waits for it; idempotent.
  void stop() noexcept;
  [[nodiscard]] PeerStats stats() const;
  /// Peers connected now, welcomed or not.
  [[nodiscard]] std::size_t peer_count() const { return peer_count_; }
  [[nodiscard]] int listener_fd() const { return listener_.get(); }

  // The loop's thread (the owner's calls).
  [[nodiscard]] Peers& peers() { return peers_; }
  /// Gives up the listener: a newcomer is refused by the kernel (a relay's name is free again).
  void close_listener() noexcept { listener_.reset(); }
  /// Closes every peer, without leaving() (the loop is stopping).
  void close_all() noexcept;
  void report(const std::string& line) const;

 private:
  void run();
  Clock::time_point next_look(Clock::time_point now) const;
  void accept_all();
  void add(io::Fd fd);
  void evict_oldest();
  void service(PeerId id, short revents);
  bool take(PeerId id, Connection& peer, Message message);
  bool handshake(PeerId id, Connection& peer, Message message);
  void refuse(PeerId id, const std::string& why, std::uint64_t PeerStats::*counter);
  void close(PeerId id);
  void expire_hellos();
  void count(std::uint64_t PeerStats::*counter, std::uint64_t by = 1);

  PeerLoopOptions options_;
  Owner& owner_;
  io::Fd listener_;
  io::WakeUp wake_;
  Peers peers_;
  std::set<PeerId> waiting_;  // peers without a Hello yet, oldest (lowest id, first deadline) first
  PeerId next_id_ = 0;
  std::atomic<std::size_t> peer_count_{0};
  Clock::time_point accept_paused_until_{};
  Clock::time_point last_eviction_report_{};
  mutable std::mutex stats_mutex_;
  PeerStats stats_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace popdist::cli::channel
