#include "channel/liveness.hpp"

#include <algorithm>

#include "channel/connection.hpp"

namespace popdist::cli::channel {

namespace {
// Long enough for a peer's wait for its Welcome to have read it (a round trip on the same host or
// network), short beside any beat interval.
constexpr auto kSettle = std::chrono::milliseconds(100);
}  // namespace

std::size_t BeatTargets::send(PeerLoop::Peers& peers, const std::string& frame, PeerLoop::Clock::time_point now) {
  std::size_t sent = 0;
  for (const auto& [id, since] : welcomed_) {
    const auto peer = peers.find(id);
    if (peer == peers.end() || now - since < kSettle) continue;
    peer->second->queue(frame);
    ++sent;
  }
  return sent;
}

DownBeat::DownBeat(std::chrono::milliseconds interval)
    : interval_(interval), next_(PeerLoop::Clock::now() + interval) {}

void DownBeat::when_due(PeerLoop::Peers& peers, PeerLoop::Clock::time_point now) {
  if (now < next_) return;
  // A late loop does not beat twice to catch up: the next beat is one interval from now at the latest.
  next_ = std::max(next_ + interval_, now);
  const std::string frame = encode(Beat{kHostBeat, sequence_++});
  const std::size_t sent = targets_.send(peers, frame, now);
  frames_ += sent, bytes_ += sent * frame.size();
}

}  // namespace popdist::cli::channel
