#include "channel/peer_loop.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "channel/connection.hpp"

namespace popdist::cli::channel {
namespace {

using Clock = PeerLoop::Clock;
constexpr auto kIdlePoll = std::chrono::milliseconds(200);
// Out of descriptors: stop accepting for a moment rather than spin on a listener that stays ready.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr auto kEvictionReportGap = std::chrono::seconds(1);

int poll_ms(Clock::time_point now, Clock::time_point next) {
  if (next <= now) return 0;
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()) + 1;
}

bool out_of_descriptors(int error) { return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM; }

}  // namespace

PeerLoop::PeerLoop(io::Fd listener, PeerLoopOptions options, Owner& owner)
    : options_(std::move(options)), owner_(owner), listener_(std::move(listener)) {
  io::set_nonblocking(listener_.get());
}

PeerLoop::~PeerLoop() { stop(); }

void PeerLoop::start() { thread_ = std::thread([this] { run(); }); }

void PeerLoop::join() noexcept {
  wake_.signal();
  if (thread_.joinable()) thread_.join();
}

void PeerLoop::stop() noexcept {
  stopping_ = true;
  join();
  close_all();
  close_listener();
}

PeerStats PeerLoop::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

void PeerLoop::report(const std::string& line) const {
  if (options_.on_error) options_.on_error(line);
}

void PeerLoop::count(std::uint64_t PeerStats::*counter, std::uint64_t by) {
  std::lock_guard lock(stats_mutex_);
  stats_.*counter += by;
}

void PeerLoop::close_all() noexcept {
  peers_.clear();
  waiting_.clear();
  peer_count_ = 0;
}

// The wake-up, the listener, the owner's link up, then every peer: one poll for all.
void PeerLoop::run() {
  std::vector<pollfd> fds;
  std::vector<PeerId> ids;
  while (!stopping_ && owner_.before_poll()) {
    const auto now = Clock::now();
    const short reading = owner_.reading() ? POLLIN : 0;
    fds.assign({{wake_.fd(), POLLIN, 0}, {now >= accept_paused_until_ ? listener_.get() : -1, POLLIN, 0},
                owner_.upstream()});
    ids.clear();
    for (const auto& [id, peer] : peers_) {
      fds.push_back({peer->fd(), static_cast<short>(reading | (peer->pending_output() ? POLLOUT : 0)), 0});
      ids.push_back(id);
    }
    if (::poll(fds.data(), fds.size(), poll_ms(now, next_look(now))) < 0 && errno != EINTR) break;
    if (fds[0].revents) wake_.drain();
    if (fds[1].revents) accept_all();
    if (fds[2].revents) owner_.upstream_ready(fds[2].revents);
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (fds[i + 3].revents) service(ids[i], fds[i + 3].revents);
    expire_hellos();
  }
  owner_.stopped();
}

Clock::time_point PeerLoop::next_look(Clock::time_point now) const {
  Clock::time_point next = now + kIdlePoll;
  // Deadlines follow the order of arrival: the oldest waiting peer's comes first.
  if (!waiting_.empty()) next = std::min(next, peers_.at(*waiting_.begin())->hello_deadline);
  if (now < accept_paused_until_) next = std::min(next, accept_paused_until_);
  return owner_.next_look(next);
}

void PeerLoop::accept_all() {
  for (;;) {
    io::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (out_of_descriptors(errno)) {
        accept_paused_until_ = Clock::now() + kAcceptPause;
        report("channel: " + options_.speaker + "cannot accept connections: out of file descriptors; pausing for " +
               std::to_string(kAcceptPause.count()) + " ms");
      }
      return;
    }
    if (owner_.admit(fd.get())) add(std::move(fd));
  }
}

void PeerLoop::add(io::Fd fd) {
  count(&PeerStats::accepted);
  if (!waiting_.empty() && waiting_.size() >= options_.max_unauthenticated) evict_oldest();
  std::string peer = describe_peer(fd.get());
  const PeerId id = next_id_++;
  peers_.emplace(id, std::make_unique<Connection>(std::move(fd), std::move(peer), Clock::now() + options_.hello_deadline,
                                                  Session(options_.secret)));
  waiting_.insert(id);
  peer_count_ = peers_.size();
}

void PeerLoop::evict_oldest() {
  const PeerId oldest = *waiting_.begin();
  std::uint64_t dropped = 0;
  {
    std::lock_guard lock(stats_mutex_);
    dropped = ++stats_.refused_over_cap;
  }
  const auto now = Clock::now();
  if (now - last_eviction_report_ >= kEvictionReportGap) {
    last_eviction_report_ = now;
    report("channel: " + options_.speaker + "dropped the connection from " + peers_.at(oldest)->peer() +
           ", the oldest of " + std::to_string(options_.max_unauthenticated) +
           " waiting to say Hello: a flood of connections? (" + std::to_string(dropped) + " dropped so far)");
  }
  close(oldest);
}

void PeerLoop::service(PeerId id, short revents) {
  const auto found = peers_.find(id);
  if (found == peers_.end()) return;  // dropped since the poll (a flood's oldest)
  Connection& peer = *found->second;
  std::vector<Message> messages;
  bool open = true;
  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    const std::uint64_t before = peer.bytes_received;
    try {
      open = peer.read_available(messages);
    } catch (const HandshakeError& error) {
      return refuse(id, error.what(), &PeerStats::refused_hello);
    } catch (const FrameError& error) {
      return refuse(id, error.what(), &PeerStats::refused_input);
    }
    count(&PeerStats::bytes_received, peer.bytes_received - before);
  }
  for (auto& message : messages)
    if (!take(id, peer, std::move(message))) return;  // the peer was dropped
  if (open && (revents & POLLOUT)) open = peer.flush();
  if (!open) close(id);
}

// False when the peer was dropped for it.
bool PeerLoop::take(PeerId id, Connection& peer, Message message) {
  if (!peer.authenticated) return handshake(id, peer, std::move(message));
  try {
    if (std::holds_alternative<Request>(message) || std::holds_alternative<Welcome>(message))
      throw FrameError(std::string("a ") + type_name(type_of(message)) + " goes down, never up");
    // Only a relay forwards Hellos (its agents'), inside its own authenticated connection.
    if (std::holds_alternative<Hello>(message) && options_.role == Role::kAgent) throw FrameError("a second Hello");
    if (std::holds_alternative<Proof>(message)) throw FrameError("a second Proof");
    owner_.received(id, peer, std::move(message));
    return true;
  } catch (const FrameError& error) {
    refuse(id, error.what(), &PeerStats::refused_input);
    return false;
  }
}

// The Hello (read first, the session checked that) is answered with a Welcome; the Proof that
// comes back (the session checked it as it was read) makes the peer one of the job's -- unless its
// owner refuses it (a second relay for a host). False when the peer was dropped.
bool PeerLoop::handshake(PeerId id, Connection& peer, Message message) {
  try {
    if (std::holds_alternative<Hello>(message)) {
      peer.answer(options_.role);
      if (peer.flush()) return true;
      close(id);  // gone already
      return false;
    }
    peer.accept();
    owner_.welcomed(id, peer, Message(*peer.session().peer_hello()));
  } catch (const FrameError& error) {
    peer.authenticated = false;
    refuse(id, error.what(), &PeerStats::refused_hello);
    return false;
  }
  waiting_.erase(id);
  std::lock_guard lock(stats_mutex_);
  ++stats_.authenticated, ++stats_.open_authenticated;
  return true;
}

void PeerLoop::refuse(PeerId id, const std::string& why, std::uint64_t PeerStats::*counter) {
  const Connection& peer = *peers_.at(id);
  count(counter);
  report("channel: " + options_.speaker + "dropped the connection from " + peer.peer() +
         (peer.host.empty() ? "" : " (host " + peer.host + ")") + ": " + why);
  close(id);
}

void PeerLoop::close(PeerId id) {
  const auto found = peers_.find(id);
  if (found == peers_.end()) return;
  owner_.leaving(id, *found->second);
  if (found->second->authenticated) {
    std::lock_guard lock(stats_mutex_);
    --stats_.open_authenticated;
  }
  waiting_.erase(id);
  peers_.erase(found);
  peer_count_ = peers_.size();
}

void PeerLoop::expire_hellos() {
  const auto now = Clock::now();
  while (!waiting_.empty() && peers_.at(*waiting_.begin())->hello_deadline <= now)
    refuse(*waiting_.begin(), "no Hello within " + std::to_string(options_.hello_deadline.count()) + " ms",
           &PeerStats::timed_out);
}

}  // namespace popdist::cli::channel
