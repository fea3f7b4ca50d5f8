#pragma once
// Liveness downwards (issue 48): `popdist run` beats every host's relay over its one TCP link, as
// the relay beats up for its host, and the relay passes each beat on to its host's other agents
// over their local sockets. So every agent knows when it last heard popdist run, and one that has
// not heard for --host-timeout ends its program (agent/host_fence.hpp): a host cut off from the
// job must neither keep its devices nor race a restarted job elsewhere. The beat down is a Beat
// frame (kHostBeat, popdist run's own sequence): the wire format is unchanged, only its direction.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "channel/peer_loop.hpp"

namespace popdist::cli::channel {

/// When popdist run was last heard, on this machine's steady clock: set by the thread that reads
/// the link, read by the agent's fence without a lock (an election may hold the link's for long).
class LastHeard {
 public:
  void heard(std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now()) noexcept {
    ticks_.store(at.time_since_epoch().count(), std::memory_order_relaxed);
  }
  /// Nothing yet: popdist run was never heard (a host is watched only once it was, both ways).
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> when() const noexcept {
    const auto ticks = ticks_.load(std::memory_order_relaxed);
    if (ticks == kNever) return std::nullopt;
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ticks));
  }

 private:
  static constexpr std::chrono::steady_clock::rep kNever = INT64_MIN;
  std::atomic<std::chrono::steady_clock::rep> ticks_{kNever};
};

/// What popdist run's beat sent down so far (for the scale probe and the tests).
struct DownBeatStats {
  std::uint64_t frames = 0;
  std::uint64_t bytes = 0;
};

/// The peers a beat goes down to: every welcomed peer, once its Welcome has had a moment to be
/// read alone -- a peer waits for its Welcome with a reader of its own that refuses anything
/// after it in the same read (handshake.hpp), and would then connect again.
class BeatTargets {
 public:
  void welcomed(PeerLoop::PeerId id, PeerLoop::Clock::time_point now) { welcomed_[id] = now; }
  void left(PeerLoop::PeerId id) { welcomed_.erase(id); }
  /// Queues `beat` on every target welcomed long enough ago, sealed for each connection; how many
  /// frames and bytes.
  DownBeatStats send(PeerLoop::Peers& peers, const Beat& beat, PeerLoop::Clock::time_point now);

 private:
  std::map<PeerLoop::PeerId, PeerLoop::Clock::time_point> welcomed_;
};

/// popdist run's side: a Beat down every `interval` to every welcomed peer (each a host's relay).
/// Used on the server's loop thread; stats() from any thread.
class DownBeat {
 public:
  explicit DownBeat(std::chrono::milliseconds interval);
  /// Queues the beat on every target when it is due (their loop writes it).
  void when_due(PeerLoop::Peers& peers, PeerLoop::Clock::time_point now);
  [[nodiscard]] BeatTargets& targets() { return targets_; }
  [[nodiscard]] PeerLoop::Clock::time_point next() const { return next_; }
  [[nodiscard]] DownBeatStats stats() const noexcept { return {frames_.load(), bytes_.load()}; }

 private:
  std::chrono::milliseconds interval_;
  PeerLoop::Clock::time_point next_;
  std::uint64_t sequence_ = 0;
  BeatTargets targets_;
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

}  // namespace popdist::cli::channel
