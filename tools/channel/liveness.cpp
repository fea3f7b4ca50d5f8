#include "channel/liveness.hpp"

#include <algorithm>

#include "channel/connection.hpp"

namespace popdist::cli::channel {

namespace {
// Long enough for a peer's wait for its Welcome to have read it (a round trip on the same host or
// network), short beside any beat interval.
constexpr auto kSettle = std::chrono::milliseconds(100);
}  // namespace

DownBeatStats BeatTargets::send(PeerLoop::Peers& peers, const Beat& beat, PeerLoop::Clock::time_point now) {
  DownBeatStats sent;
  for (const auto& [id, since] : welcomed_) {
    const auto peer = peers.find(id);
    if (peer == peers.end() || now - since < kSettle) continue;
    const std::size_t before = peer->second->pending_output();
    peer->second->send(beat);  // sealed with this connection's key and sequence
    ++sent.frames;
    sent.bytes += peer->second->pending_output() - before;
  }
  return sent;
}

DownBeat::DownBeat(std::chrono::milliseconds interval)
    : interval_(interval), next_(PeerLoop::Clock::now() + interval) {}

void DownBeat::when_due(PeerLoop::Peers& peers, PeerLoop::Clock::time_point now) {
  if (now < next_) return;
  // A late loop does not beat twice to catch up: the next beat is one interval from now at the latest.
  next_ = std::max(next_ + interval_, now);
  const DownBeatStats sent = targets_.send(peers, Beat{kHostBeat, sequence_++}, now);
  frames_ += sent.frames, bytes_ += sent.bytes;
}

}  // namespace popdist::cli::channel
