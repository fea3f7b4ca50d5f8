#include "channel/relay.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#include "channel/connection.hpp"
#include "channel/handshake.hpp"
#include "channel/secret.hpp"
#include "channel/sockets.hpp"
#include "io/read_write.hpp"
#include "io/unix_socket.hpp"

namespace popdist::cli::channel {
namespace {

using Clock = std::chrono::steady_clock;
// Backpressure: while this much waits to go up, the relay stops reading its local agents.
constexpr std::size_t kUpstreamHighWater = 1 << 20;
constexpr std::size_t kQueuedHighWater = 4096;

/// A message waiting to go up, and when it came: its age grows by the time it waits here.
struct Pending {
  Message message;
  Clock::time_point received;
};

const Message& aged(Pending& pending, Clock::time_point now) {
  const auto waited = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - pending.received).count());
  if (auto* ended = std::get_if<Ended>(&pending.message)) ended->age_ns += waited;
  if (auto* activity = std::get_if<Activity>(&pending.message)) activity->age_ns += waited;
  return pending.message;
}

int poll_ms(Clock::time_point now, Clock::time_point next) {
  return next <= now ? 0 : static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()) + 1;
}

/// The link up, its handshake done (handshake.hpp).
struct Upstream {
  io::Fd fd;
  Session session;
};

Upstream connect_upstream(const RelayOptions& options) {
  for (auto pause = std::chrono::milliseconds(10);; pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    io::Fd fd = connect_tcp(options.server_address, options.server_port, options.connect_deadline);
    const auto welcome_by = std::min(options.connect_deadline, Clock::now() + options.hello_deadline);
    std::optional<Session> session;
    try {
      session = shake_hands(fd.get(), options.secret, options.host, Role::kRelay, options.instances, welcome_by);
    } catch (const HandshakeError& error) {  // no retry: the job's popdist run would have proven it
      throw std::runtime_error("channel: the peer at " + options.server_address + " port " +
                               std::to_string(options.server_port) + " is not host " + options.host +
                               "'s popdist run, or has another job key (" + error.what() + ")");
    }
    if (session) return Upstream{std::move(fd), std::move(*session)};
    // Closed without a Welcome: a wrong key, or dropped in a flood of strangers' connections.
    if (Clock::now() + pause > options.connect_deadline)
      throw std::runtime_error("channel: popdist run at " + options.server_address + " port " +
                               std::to_string(options.server_port) + " did not welcome host " + options.host +
                               "'s relay: a wrong job key, or a flood of connections");
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace

// What a relay adds to the loop both ends share (peer_loop.hpp): its host's agents' messages and
// its own agent's go up its one link to popdist run, aged by their wait here; Requests come down
// it to the agents they name; the host's beat goes up while any of its agents lives; and when its
// own agent is done it lingers for the others.
class Relay::Loop final : public PeerLoop::Owner {
 public:
  Loop(io::Fd listener, RelayOptions options, RelayCallbacks callbacks)
      : options_(std::move(options)), callbacks_(std::move(callbacks)),
        upstream_(connect(options_)),
        next_beat_(Clock::now() + options_.beat_interval), loop_(std::move(listener), peer_options(), *this) {
    io::set_nonblocking(upstream_.fd());
    upstream_.authenticated = true;
    loop_.start();
  }

  void send(Message message) {
    {
      std::lock_guard lock(own_mutex_);
      own_.push_back({std::move(message), Clock::now()});
    }
    loop_.wake();
  }

  bool alive() const { return !upstream_lost_; }
  std::size_t local_agents() const { return loop_.peer_count(); }
  PeerStats stats() const { return loop_.stats(); }

  void finish(std::chrono::milliseconds linger) noexcept {
    linger_deadline_ = Clock::now() + linger;
    finishing_ = true;
    loop_.join();
  }

  void stop() noexcept {
    if (!finishing_) linger_deadline_ = Clock::now(), finishing_ = true;
    loop_.join();
  }

 private:
  static Connection connect(const RelayOptions& options) {
    Upstream link = connect_upstream(options);
    return Connection(std::move(link.fd), options.server_address, {}, std::move(link.session));
  }

  PeerLoopOptions peer_options() const {
    return PeerLoopOptions{options_.secret, Role::kAgent, options_.hello_deadline, options_.max_unauthenticated,
                           "host " + options_.host + "'s relay ", callbacks_.on_error};
  }

  // The key keeps other users out as well (they cannot prove it); the uid check keeps them from
  // even trying.
  bool admit(int fd) override {
    if (io::same_user(fd)) return true;
    loop_.report("channel: host " + options_.host + "'s relay refused a local connection from uid " +
                 std::to_string(io::peer_uid(fd)) + ": another user");
    return false;
  }

  // A Hello goes up too: popdist run routes Requests by it.
  void welcomed(PeerLoop::PeerId, Connection&, Message hello) override {
    ++welcomed_agents_;
    std::get<Hello>(hello).nonce.clear();  // this link's, of no use up there
    queue_.push_back({std::move(hello), Clock::now()});
  }
  // The host's beat is the relay's: an agent's own stops here (its connection says it lives).
  void received(PeerLoop::PeerId, Connection&, Message message) override {
    if (!std::holds_alternative<Beat>(message)) queue_.push_back({std::move(message), Clock::now()});
  }
  void leaving(PeerLoop::PeerId, const Connection& peer) override {
    if (peer.authenticated) --welcomed_agents_;
  }

  bool before_poll() override {
    if (upstream_lost_) return false;
    take_own();
    beat_when_due();
    pump_upstream();
    return !upstream_lost_ && !(finishing_ && (done() || Clock::now() >= linger_deadline_.load()));
  }

  pollfd upstream() const override {
    return {upstream_.fd(), static_cast<short>(POLLIN | (upstream_.pending_output() ? POLLOUT : 0)), 0};
  }

  void upstream_ready(short revents) override;

  bool reading() const override {
    return queue_.size() < kQueuedHighWater && upstream_.pending_output() < kUpstreamHighWater;
  }

  Clock::time_point next_look(Clock::time_point next) const override {
    next = std::min(next, next_beat_);
    return finishing_ ? std::min(next, linger_deadline_.load()) : next;
  }

  void stopped() override;

  bool done() const {
    std::lock_guard lock(own_mutex_);
    return loop_.peer_count() == 0 && own_.empty() && queue_.empty() && upstream_.pending_output() == 0;
  }

  // While its own agent runs, or a local agent is still connected (a lingering relay).
  void beat_when_due() {
    const auto now = Clock::now();
    if (now < next_beat_) return;
    next_beat_ = std::max(next_beat_ + options_.beat_interval, now);
    if (!finishing_ || welcomed_agents_ > 0) queue_.push_back({Beat{kHostBeat, beat_sequence_++}, now});
  }

  void take_own() {
    std::lock_guard lock(own_mutex_);
    while (!own_.empty()) queue_.push_back(std::move(own_.front())), own_.pop_front();
  }

  void pump_upstream() {
    const auto now = Clock::now();
    while (!queue_.empty() && upstream_.pending_output() < kUpstreamHighWater) {
      upstream_.send(aged(queue_.front(), now));
      queue_.pop_front();
    }
    if (upstream_.pending_output() && !upstream_.flush()) lose_upstream("writing to it failed");
  }

  void lose_upstream(const std::string& why) {
    if (upstream_lost_) return;
    upstream_lost_ = true;
    loop_.report("channel: host " + options_.host + "'s connection to popdist run ended: " + why);
  }

  void route(const Request& request);

  RelayOptions options_;
  RelayCallbacks callbacks_;
  Connection upstream_;
  mutable std::mutex own_mutex_;  // own_, which the relay's own agent adds to
  std::deque<Pending> own_;
  std::deque<Pending> queue_;
  std::size_t welcomed_agents_ = 0;  // local agents connected and welcomed
  Clock::time_point next_beat_;
  std::uint64_t beat_sequence_ = 0;
  std::atomic<bool> upstream_lost_{false};
  std::atomic<bool> finishing_{false};
  std::atomic<Clock::time_point> linger_deadline_{Clock::time_point{}};
  PeerLoop loop_;  // last: its thread stops before the rest goes
};

void Relay::Loop::upstream_ready(short revents) {
  std::vector<Message> messages;
  try {
    if ((revents & (POLLIN | POLLHUP | POLLERR)) && !upstream_.read_available(messages))
      return lose_upstream("popdist run closed it");
  } catch (const FrameError& error) {
    return lose_upstream(error.what());
  }
  for (const auto& message : messages) {
    if (const auto* request = std::get_if<Request>(&message)) route(*request);
    else loop_.report(std::string("channel: ignored a ") + type_name(type_of(message)) + " from popdist run");
  }
  if (revents & POLLOUT) pump_upstream();
}

void Relay::Loop::route(const Request& request) {
  const bool all = request.instance == kAllInstances;
  bool found = false;
  for (const std::int32_t own : options_.instances)
    if (all || own == request.instance) found = true, callbacks_.on_own_request(request);
  for (auto& [id, local] : loop_.peers())
    for (const std::int32_t instance : local->instances)
      if (local->authenticated && (all || instance == request.instance))
        found = true, local->send(request), (void)local->flush();
  if (!found)
    loop_.report("channel: host " + options_.host + " has no agent for instance " + std::to_string(request.instance));
}

// Give up the name first (agents that come now elect another relay), then send what is left and
// close the link up before the local agents' links: popdist run takes one relay per host, so the
// relay they elect next must not find this one still connected.
void Relay::Loop::stopped() {
  loop_.close_listener();
  take_own();
  pump_upstream();
  const auto flush_by = Clock::now() + options_.hello_deadline;
  while (!upstream_lost_ && (upstream_.pending_output() || !queue_.empty()) && Clock::now() < flush_by) {
    pollfd entry{upstream_.fd(), POLLOUT, 0};
    if (poll(&entry, 1, poll_ms(Clock::now(), flush_by)) > 0 && !upstream_.flush()) upstream_lost_ = true;
    pump_upstream();
  }
  ::shutdown(upstream_.fd(), SHUT_RDWR);
  if (loop_.peer_count() > 0 && !upstream_lost_)
    loop_.report("channel: host " + options_.host + "'s relay stops with " + std::to_string(loop_.peer_count()) +
                 " local agents still connected; they elect another relay");
  loop_.close_all();
}

Relay::Relay(io::Fd listener, RelayOptions options, RelayCallbacks callbacks)
    : loop_(std::make_unique<Loop>(std::move(listener), std::move(options), std::move(callbacks))) {}
Relay::~Relay() { loop_->stop(); }
void Relay::send(Message message) { loop_->send(std::move(message)); }
bool Relay::alive() const { return loop_->alive(); }
std::size_t Relay::local_agents() const { return loop_->local_agents(); }
PeerStats Relay::stats() const { return loop_->stats(); }
void Relay::finish(std::chrono::milliseconds linger) noexcept { loop_->finish(linger); }

}  // namespace popdist::cli::channel
