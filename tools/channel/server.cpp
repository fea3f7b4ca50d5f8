#include "channel/server.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <map>
#include <optional>
#include <mutex>
#include <thread>
#include <vector>

#include "channel/connection.hpp"
#include "channel/secret.hpp"

namespace popdist::cli::channel {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kIdlePoll = std::chrono::milliseconds(200);
// Out of descriptors: stop accepting for a moment rather than spin on a listener that stays ready.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr auto kRefusalReportGap = std::chrono::seconds(1);

int poll_timeout(Clock::time_point now, Clock::time_point next) {
  if (next <= now) return 0;
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()) + 1;
}

}  // namespace

class Server::Loop {
 public:
  Loop(ServerOptions options, ServerCallbacks callbacks)
      : options_(std::move(options)), callbacks_(std::move(callbacks)), listener_(listen_tcp(options_.address, options_.port)) {
    set_nonblocking(listener_.get());
    thread_ = std::thread([this] { run(); });
  }

  int port() const { return local_port(listener_.get()); }

  void request(const Request& request) {
    { std::lock_guard lock(mutex_); requests_.push_back(request); }
    wake_.signal();
  }

  ServerStats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  void stop() noexcept {
    stopping_ = true;
    wake_.signal();
    if (thread_.joinable()) thread_.join();
    connections_.clear();
    listener_.reset();
  }

 private:
  void run() {
    std::vector<pollfd> fds;
    std::vector<std::uint64_t> ids;
    while (!stopping_) {
      const auto now = Clock::now();
      fds.assign({{wake_.fd(), POLLIN, 0}});
      const bool accepting = now >= accept_paused_until_;
      fds.push_back({accepting ? listener_.get() : -1, POLLIN, 0});
      ids.clear();
      for (const auto& [id, connection] : connections_) {
        const short events = POLLIN | (connection->pending_output() ? POLLOUT : 0);
        fds.push_back({connection->fd(), events, 0}), ids.push_back(id);
      }
      if (poll(fds.data(), fds.size(), poll_timeout(now, next_wake(now))) < 0 && errno != EINTR) break;
      if (fds[0].revents) wake_.drain(), route_requests();
      if (fds[1].revents) accept_all();
      for (std::size_t i = 0; i < ids.size(); ++i)
        if (fds[i + 2].revents) service(ids[i], fds[i + 2].revents);
      expire_hellos();
    }
  }

  Clock::time_point next_wake(Clock::time_point now) const {
    Clock::time_point next = now + kIdlePoll;
    for (const auto& [id, connection] : connections_)
      if (!connection->authenticated) next = std::min(next, connection->hello_deadline);
    if (now < accept_paused_until_) next = std::min(next, accept_paused_until_);
    return next;
  }

  void accept_all() {
    for (;;) {
      Fd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd.valid()) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          accept_paused_until_ = Clock::now() + kAcceptPause;
          report("channel: cannot accept connections: out of file descriptors; pausing for 100 ms");
        }
        return;
      }
      add(std::move(fd));
    }
  }

  // Over the cap, the oldest connection still waiting for its Hello makes room: a flood must then
  // outpace a relay's Hello (a round trip) to starve it, where refusing newcomers would let a
  // few idle connections renewed every deadline lock the job's relays out.
  void add(Fd fd) {
    std::string peer = describe_peer(fd.get());
    std::size_t waiting = 0;
    std::optional<std::uint64_t> oldest;
    for (const auto& [id, connection] : connections_)
      if (!connection->authenticated) ++waiting, oldest = oldest ? oldest : id;
    { std::lock_guard lock(mutex_); ++stats_.accepted; }
    if (waiting >= options_.max_unauthenticated && oldest) {
      std::uint64_t dropped = 0;
      { std::lock_guard lock(mutex_); dropped = ++stats_.refused_over_cap; }
      report_eviction(connections_.at(*oldest)->peer(), dropped);
      close(*oldest, *connections_.at(*oldest));
    }
    auto connection = std::make_unique<Connection>(std::move(fd), std::move(peer), Clock::now() + options_.hello_deadline);
    connections_.emplace(next_id_++, std::move(connection));
  }

  // A flood is reported once a second with its count so far, not once per connection.
  void report_eviction(const std::string& peer, std::uint64_t dropped) {
    const auto now = Clock::now();
    if (now - last_refusal_report_ < kRefusalReportGap) return;
    last_refusal_report_ = now;
    report("channel: dropped the connection from " + peer + ", the oldest of " +
           std::to_string(options_.max_unauthenticated) + " waiting to say Hello: a flood of connections? (" +
           std::to_string(dropped) + " dropped so far)");
  }

  void service(std::uint64_t id, short revents) {
    const auto found = connections_.find(id);
    if (found == connections_.end()) return;  // dropped since the poll (a flood's oldest)
    Connection& connection = *found->second;
    bool open = true;
    std::vector<Message> messages;
    try {
      const std::uint64_t before = connection.bytes_received;
      if (revents & (POLLIN | POLLHUP | POLLERR)) open = connection.read_available(messages);
      { std::lock_guard lock(mutex_); stats_.bytes_received += connection.bytes_received - before; }
      for (auto& message : messages) handle(id, connection, std::move(message));
      if (open && (revents & POLLOUT)) open = connection.flush();
    } catch (const FrameError& error) {
      // A Hello refused was counted by welcome(); anything else is bad input.
      if (connection.authenticated || !welcome_refused_) { std::lock_guard lock(mutex_); ++stats_.refused_input; }
      welcome_refused_ = false;
      refuse(id, connection, error.what());
      return;
    }
    if (!open) close(id, connection);
  }

  void handle(std::uint64_t id, Connection& connection, Message message) {
    if (!connection.authenticated) return welcome(id, connection, message);
    if (std::holds_alternative<Request>(message) || std::holds_alternative<Welcome>(message))
      throw FrameError(std::string("a ") + type_name(type_of(message)) + " goes down, never up");
    if (auto* hello = std::get_if<Hello>(&message)) {
      // A relay forwards its agents' Hellos: each must carry the secret too.
      if (!secrets_equal(hello->secret, options_.secret)) throw FrameError("forwarded Hello with a wrong secret");
      for (const std::int32_t instance : hello->instances) route_[instance] = id;
      hello->secret.clear();
    }
    deliver(connection.host, std::move(message));
  }

  void welcome(std::uint64_t id, Connection& connection, Message& first) {
    try {
      connection.authenticate(first, options_.secret, std::nullopt);
    } catch (const FrameError&) {
      { std::lock_guard lock(mutex_); ++stats_.refused_hello; }
      welcome_refused_ = true;
      throw;
    }
    { std::lock_guard lock(mutex_); ++stats_.authenticated, ++stats_.open_authenticated; }
    for (const std::int32_t instance : connection.instances) route_[instance] = id;
    connection.queue(encode(Welcome{}));
    if (!connection.flush()) return;  // a closed peer is seen on its next poll
    std::get<Hello>(first).secret.clear();
    deliver(connection.host, std::move(first));
  }

  void deliver(const std::string& host, Message message) {
    if (callbacks_.on_message) callbacks_.on_message(Delivery{host, Clock::now(), std::move(message)});
  }

  void refuse(std::uint64_t id, Connection& connection, const std::string& why) {
    report("channel: dropped the connection from " + connection.peer() +
           (connection.host.empty() ? "" : " (host " + connection.host + ")") + ": " + why);
    close(id, connection);
  }

  void close(std::uint64_t id, Connection& connection) {
    const bool was_host = connection.authenticated;
    const std::string host = connection.host;
    if (was_host) { std::lock_guard lock(mutex_); --stats_.open_authenticated; }
    for (auto it = route_.begin(); it != route_.end();) it = it->second == id ? route_.erase(it) : std::next(it);
    connections_.erase(id);
    if (was_host && callbacks_.on_closed) callbacks_.on_closed(host);
  }

  void expire_hellos() {
    const auto now = Clock::now();
    std::vector<std::uint64_t> late;
    for (const auto& [id, connection] : connections_)
      if (!connection->authenticated && connection->hello_deadline <= now) late.push_back(id);
    for (const std::uint64_t id : late) {
      Connection& connection = *connections_.at(id);
      { std::lock_guard lock(mutex_); ++stats_.timed_out; }
      report("channel: dropped the connection from " + connection.peer() + ": no Hello within " +
             std::to_string(options_.hello_deadline.count()) + " ms");
      close(id, connection);
    }
  }

  void route_requests();
  // Callbacks run on this thread with no lock held, so they may call stats() or request_stacks().
  void report(const std::string& line) {
    if (callbacks_.on_error) callbacks_.on_error(line);
  }

  ServerOptions options_;
  ServerCallbacks callbacks_;
  Fd listener_;
  WakeUp wake_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  mutable std::mutex mutex_;  // requests_ and stats_, which other threads read
  bool welcome_refused_ = false;
  std::vector<Request> requests_;
  ServerStats stats_;
  std::map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::map<std::int32_t, std::uint64_t> route_;  // instance -> the connection that speaks for it
  std::uint64_t next_id_ = 0;
  Clock::time_point accept_paused_until_{};
  Clock::time_point last_refusal_report_{};
};

void Server::Loop::route_requests() {
  std::vector<Request> requests;
  { std::lock_guard lock(mutex_); requests.swap(requests_); }
  for (const Request& request : requests) {
    const std::int32_t instance = request.instance;
    const std::string frame = encode(request);
    if (instance == kAllInstances) {
      for (auto& [id, connection] : connections_)
        if (connection->authenticated) connection->queue(frame);
      continue;
    }
    const auto route = route_.find(instance);
    if (route == route_.end()) {
      report("channel: cannot ask instance " + std::to_string(instance) + " for its stacks: no host speaks for it");
      continue;
    }
    connections_.at(route->second)->queue(frame);
  }
}

Server::Server(ServerOptions options, ServerCallbacks callbacks)
    : loop_(std::make_unique<Loop>(std::move(options), std::move(callbacks))) {}
Server::~Server() { stop(); }
int Server::port() const { return loop_->port(); }
void Server::request_stacks(std::int32_t instance, std::chrono::milliseconds wait) {
  loop_->request(Request{instance, static_cast<std::uint32_t>(wait.count())});
}
ServerStats Server::stats() const { return loop_->stats(); }
void Server::stop() noexcept { loop_->stop(); }

}  // namespace popdist::cli::channel
