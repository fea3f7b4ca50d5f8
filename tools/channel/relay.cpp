#include "channel/relay.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "channel/connection.hpp"
#include "channel/secret.hpp"

namespace popdist::cli::channel {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kIdlePoll = std::chrono::milliseconds(200);
// Backpressure: while this much waits to go up, the relay stops reading its local agents.
constexpr std::size_t kUpstreamHighWater = 1 << 20;
constexpr std::size_t kQueuedHighWater = 4096;

/// A message waiting to go up, and when it came: its age grows by the time it waits here.
struct Pending {
  Message message;
  Clock::time_point received;
};

std::string encode_aged(Pending& pending, Clock::time_point now) {
  const auto waited = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - pending.received).count());
  if (auto* ended = std::get_if<Ended>(&pending.message)) ended->age_ns += waited;
  if (auto* activity = std::get_if<Activity>(&pending.message)) activity->age_ns += waited;
  return encode(pending.message);
}

int poll_ms(Clock::time_point now, Clock::time_point next) {
  return next <= now ? 0 : static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()) + 1;
}

Fd connect_upstream(const RelayOptions& options) {
  const std::string hello = encode(Hello{options.secret, options.host, Role::kRelay, options.instances});
  for (auto pause = std::chrono::milliseconds(10);; pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    Fd fd = connect_tcp(options.server_address, options.server_port, options.connect_deadline);
    const auto welcome_by = std::min(options.connect_deadline, Clock::now() + options.hello_deadline);
    if (write_all(fd.get(), hello) && await_welcome(fd.get(), welcome_by)) return fd;
    // Closed without a Welcome: a wrong secret, or dropped in a flood of strangers' connections.
    if (Clock::now() + pause > options.connect_deadline)
      throw std::runtime_error("channel: popdist run at " + options.server_address + " port " +
                               std::to_string(options.server_port) + " did not welcome host " + options.host +
                               "'s relay: a wrong " + kSecretVariable + ", or a flood of connections");
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace

bool await_welcome(int fd, Clock::time_point deadline) {
  FrameDecoder decoder;
  char chunk[256];
  for (;;) {
    pollfd entry{fd, POLLIN, 0};
    const int ready = poll(&entry, 1, poll_ms(Clock::now(), deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t got = recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return false;
    decoder.feed(std::string_view(chunk, static_cast<std::size_t>(got)));
    try {
      if (auto message = decoder.next()) return std::holds_alternative<Welcome>(*message) && decoder.buffered() == 0;
    } catch (const FrameError&) {
      return false;
    }
  }
}

class Relay::Loop {
 public:
  Loop(Fd listener, RelayOptions options, RelayCallbacks callbacks)
      : options_(std::move(options)), callbacks_(std::move(callbacks)), listener_(std::move(listener)),
        upstream_(connect_upstream(options_), options_.server_address, {}) {
    set_nonblocking(listener_.get());
    set_nonblocking(upstream_.fd());
    upstream_.authenticated = true;
    thread_ = std::thread([this] { run(); });
  }

  void send(Message message) {
    { std::lock_guard lock(mutex_); own_.push_back({std::move(message), Clock::now()}); }
    wake_.signal();
  }

  bool alive() const { return !upstream_lost_; }
  std::size_t local_agents() const { return local_count_; }

  void finish(std::chrono::milliseconds linger) noexcept {
    linger_deadline_ = Clock::now() + linger;
    finishing_ = true;
    stop();
  }

  void stop() noexcept {
    if (!finishing_) linger_deadline_ = Clock::now(), finishing_ = true;
    wake_.signal();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::vector<pollfd> fds;
    std::vector<std::uint64_t> ids;
    while (!upstream_lost_) {
      take_own();
      pump_upstream();
      if (finishing_ && (done() || Clock::now() >= linger_deadline_.load())) break;
      const bool reading = queue_.size() < kQueuedHighWater && upstream_.pending_output() < kUpstreamHighWater;
      fds.assign({{wake_.fd(), POLLIN, 0}, {listener_.get(), POLLIN, 0},
                  {upstream_.fd(), static_cast<short>(POLLIN | (upstream_.pending_output() ? POLLOUT : 0)), 0}});
      ids.clear();
      for (const auto& [id, local] : locals_) fds.push_back({local->fd(), static_cast<short>(reading ? POLLIN : 0), 0}), ids.push_back(id);
      const auto now = Clock::now();
      if (poll(fds.data(), fds.size(), poll_ms(now, next_wake(now))) < 0 && errno != EINTR) break;
      if (fds[0].revents) wake_.drain();
      if (fds[1].revents) accept_all();
      if (fds[2].revents) service_upstream(fds[2].revents);
      for (std::size_t i = 0; i < ids.size(); ++i)
        if (fds[i + 3].revents) service_local(ids[i]);
      expire_hellos();
    }
    wind_up();
  }

  bool done() const {
    std::lock_guard lock(mutex_);
    return locals_.empty() && own_.empty() && queue_.empty() && upstream_.pending_output() == 0;
  }

  Clock::time_point next_wake(Clock::time_point now) const {
    Clock::time_point next = now + kIdlePoll;
    for (const auto& [id, local] : locals_)
      if (!local->authenticated) next = std::min(next, local->hello_deadline);
    return finishing_ ? std::min(next, linger_deadline_.load()) : next;
  }

  // Give up the name first (agents that come now elect another relay), then send what is left.
  void wind_up() {
    listener_.reset();
    if (!locals_.empty() && !upstream_lost_)
      report("channel: host " + options_.host + "'s relay stops with " + std::to_string(locals_.size()) +
             " local agents still connected; they elect another relay");
    locals_.clear();
    local_count_ = 0;
    take_own();
    pump_upstream();
    const auto flush_by = Clock::now() + options_.hello_deadline;
    while (!upstream_lost_ && (upstream_.pending_output() || !queue_.empty()) && Clock::now() < flush_by) {
      pollfd entry{upstream_.fd(), POLLOUT, 0};
      if (poll(&entry, 1, poll_ms(Clock::now(), flush_by)) > 0 && !upstream_.flush()) upstream_lost_ = true;
      pump_upstream();
    }
  }

  void take_own() {
    std::lock_guard lock(mutex_);
    while (!own_.empty()) queue_.push_back(std::move(own_.front())), own_.pop_front();
  }

  void pump_upstream() {
    const auto now = Clock::now();
    while (!queue_.empty() && upstream_.pending_output() < kUpstreamHighWater) {
      upstream_.queue(encode_aged(queue_.front(), now));
      queue_.pop_front();
    }
    if (upstream_.pending_output() && !upstream_.flush()) lose_upstream("writing to it failed");
  }

  void lose_upstream(const std::string& why) {
    if (upstream_lost_) return;
    upstream_lost_ = true;
    report("channel: host " + options_.host + "'s connection to popdist run ended: " + why);
  }

  void service_upstream(short revents) {
    std::vector<Message> messages;
    try {
      if ((revents & (POLLIN | POLLHUP | POLLERR)) && !upstream_.read_available(messages))
        return lose_upstream("popdist run closed it");
    } catch (const FrameError& error) {
      return lose_upstream(error.what());
    }
    for (const auto& message : messages) {
      if (const auto* request = std::get_if<Request>(&message)) route(*request);
      else report(std::string("channel: ignored a ") + type_name(type_of(message)) + " from popdist run");
    }
    if (revents & POLLOUT) pump_upstream();
  }

  void route(const Request& request) {
    const bool all = request.instance == kAllInstances;
    bool found = false;
    for (const std::int32_t own : options_.instances)
      if (all || own == request.instance) found = true, callbacks_.on_own_request(request);
    const std::string frame = encode(request);
    for (auto& [id, local] : locals_)
      for (const std::int32_t instance : local->instances)
        if (all || instance == request.instance) found = true, local->queue(frame), (void)local->flush();
    if (!found) report("channel: host " + options_.host + " has no agent for instance " + std::to_string(request.instance));
  }

  void accept_all();
  void service_local(std::uint64_t id);
  void drop_local(std::uint64_t id, const std::string& why);
  void expire_hellos();
  void report(const std::string& line) {
    if (callbacks_.on_error) callbacks_.on_error(line);
  }

  RelayOptions options_;
  RelayCallbacks callbacks_;
  Fd listener_;
  Connection upstream_;
  WakeUp wake_;
  std::thread thread_;
  mutable std::mutex mutex_;  // own_
  std::deque<Pending> own_;
  std::deque<Pending> queue_;
  std::map<std::uint64_t, std::unique_ptr<Connection>> locals_;
  std::uint64_t next_id_ = 0;
  std::uint64_t refused_ = 0;
  Clock::time_point last_refusal_report_{};
  std::atomic<std::size_t> local_count_{0};
  std::atomic<bool> upstream_lost_{false};
  std::atomic<bool> finishing_{false};
  std::atomic<Clock::time_point> linger_deadline_{Clock::time_point{}};
};

void Relay::Loop::accept_all() {
  for (;;) {
    Fd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) return;
    // The secret keeps other users out as well; the uid check keeps them from even trying.
    if (peer_uid(fd.get()) != getuid()) {
      report("channel: host " + options_.host + "'s relay refused a local connection from uid " +
             std::to_string(peer_uid(fd.get())) + ": another user");
      continue;
    }
    std::size_t waiting = 0;
    for (const auto& [id, local] : locals_) waiting += local->authenticated ? 0 : 1;
    if (waiting >= options_.max_unauthenticated) {
      ++refused_;
      if (Clock::now() - last_refusal_report_ >= std::chrono::seconds(1))  // a line a second, with the count
        last_refusal_report_ = Clock::now(),
        report("channel: host " + options_.host + "'s relay refused a local connection: " + std::to_string(waiting) +
               " are already waiting to say Hello (" + std::to_string(refused_) + " refused so far)");
      continue;
    }
    std::string peer = "a local agent (pid unknown)";
    locals_.emplace(next_id_++, std::make_unique<Connection>(std::move(fd), std::move(peer),
                                                             Clock::now() + options_.hello_deadline));
    local_count_ = locals_.size();
  }
}

void Relay::Loop::service_local(std::uint64_t id) {
  const auto found = locals_.find(id);
  if (found == locals_.end()) return;
  Connection& local = *found->second;
  std::vector<Message> messages;
  try {
    const bool open = local.read_available(messages);
    for (auto& message : messages) {
      if (!local.authenticated) {
        local.authenticate(message, options_.secret, Role::kAgent);
        local.queue(encode(Welcome{}));
        if (!local.flush()) break;
      } else if (std::holds_alternative<Request>(message) || std::holds_alternative<Welcome>(message)) {
        throw FrameError(std::string("a ") + type_name(type_of(message)) + " goes down, never up");
      }
      queue_.push_back({std::move(message), Clock::now()});  // a Hello too: popdist run routes by it
    }
    if (!open) drop_local(id, "");
  } catch (const FrameError& error) {
    drop_local(id, error.what());
  }
}

void Relay::Loop::drop_local(std::uint64_t id, const std::string& why) {
  if (!why.empty()) report("channel: host " + options_.host + "'s relay dropped a local connection: " + why);
  locals_.erase(id);
  local_count_ = locals_.size();
}

void Relay::Loop::expire_hellos() {
  const auto now = Clock::now();
  std::vector<std::uint64_t> late;
  for (const auto& [id, local] : locals_)
    if (!local->authenticated && local->hello_deadline <= now) late.push_back(id);
  for (const std::uint64_t id : late)
    drop_local(id, "no Hello within " + std::to_string(options_.hello_deadline.count()) + " ms");
}

Relay::Relay(Fd listener, RelayOptions options, RelayCallbacks callbacks)
    : loop_(std::make_unique<Loop>(std::move(listener), std::move(options), std::move(callbacks))) {}
Relay::~Relay() { loop_->stop(); }
void Relay::send(Message message) { loop_->send(std::move(message)); }
bool Relay::alive() const { return loop_->alive(); }
std::size_t Relay::local_agents() const { return loop_->local_agents(); }
void Relay::finish(std::chrono::milliseconds linger) noexcept { loop_->finish(linger); }

}  // namespace popdist::cli::channel
