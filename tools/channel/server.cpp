#include "channel/server.hpp"

#include <map>
#include <mutex>
#include <vector>

#include "channel/connection.hpp"
#include "channel/peer_loop.hpp"
#include "channel/session.hpp"
#include "channel/sockets.hpp"

namespace popdist::cli::channel {

// What the server adds to the loop both ends share (peer_loop.hpp): a host's messages go to the
// callback with its name and their arrival, and the Requests of other threads go down to the
// host that speaks for the instance.
class Server::Loop final : public PeerLoop::Owner {
 public:
  Loop(ServerOptions options, ServerCallbacks callbacks)
      : callbacks_(std::move(callbacks)),
        loop_(listen_tcp(options.address, options.port), peer_options(options, callbacks_), *this) {
    loop_.start();
  }

  int port() const { return local_port(loop_.listener_fd()); }

  void request(const Request& request) {
    {
      std::lock_guard lock(requests_mutex_);
      requests_.push_back(request);
    }
    loop_.wake();
  }

  PeerStats stats() const { return loop_.stats(); }
  void stop() noexcept { loop_.stop(); }

 private:
  static PeerLoopOptions peer_options(const ServerOptions& options, const ServerCallbacks& callbacks) {
    (void)Session(options.secret);  // a malformed key throws here, not at each peer
    return PeerLoopOptions{options.secret, std::nullopt, options.hello_deadline, options.max_unauthenticated, "",
                           callbacks.on_error};
  }

  // One relay per host: a second claim for a host already connected is refused (its relay
  // retries, so a re-elected relay gets in once the last one's connection has closed).
  void welcomed(PeerLoop::PeerId id, Connection& peer, Message hello) override {
    if (const auto held = hosts_.find(peer.host); held != hosts_.end())
      throw FrameError("a second relay for host " + peer.host + ", which " + loop_.peers().at(held->second)->peer() +
                       " speaks for already");
    hosts_[peer.host] = id;
    for (const std::int32_t instance : peer.instances) route_[instance] = id;
    std::get<Hello>(hello).nonce.clear();
    deliver(peer.host, std::move(hello));
  }

  // A forwarded Hello: the relay, which authenticated its agent (session.hpp), vouches for it.
  void received(PeerLoop::PeerId id, Connection& peer, Message message) override {
    if (auto* hello = std::get_if<Hello>(&message)) {
      for (const std::int32_t instance : hello->instances) route_[instance] = id;
      hello->nonce.clear();
    }
    deliver(peer.host, std::move(message));
  }

  void leaving(PeerLoop::PeerId id, const Connection& peer) override {
    for (auto it = route_.begin(); it != route_.end();) it = it->second == id ? route_.erase(it) : std::next(it);
    if (const auto held = hosts_.find(peer.host); held != hosts_.end() && held->second == id) hosts_.erase(held);
    if (peer.authenticated && callbacks_.on_closed) callbacks_.on_closed(peer.host);
  }

  bool before_poll() override {
    route_requests();
    return true;
  }

  // Callbacks run on the loop's thread with no lock held, so they may call stats() or request_stacks().
  void deliver(const std::string& host, Message message) {
    if (callbacks_.on_message) callbacks_.on_message(Delivery{host, PeerLoop::Clock::now(), std::move(message)});
  }

  void route_requests();

  ServerCallbacks callbacks_;
  std::mutex requests_mutex_;  // requests_, which other threads add to
  std::vector<Request> requests_;
  std::map<std::int32_t, PeerLoop::PeerId> route_;  // instance -> the peer that speaks for it
  std::map<std::string, PeerLoop::PeerId> hosts_;   // host -> its one relay's peer
  PeerLoop loop_;                                   // last: its thread stops before the rest goes
};

void Server::Loop::route_requests() {
  std::vector<Request> requests;
  {
    std::lock_guard lock(requests_mutex_);
    requests.swap(requests_);
  }
  for (const Request& request : requests) {
    if (request.instance == kAllInstances) {
      for (auto& [id, peer] : loop_.peers())
        if (peer->authenticated) peer->send(request);
      continue;
    }
    const auto route = route_.find(request.instance);
    if (route == route_.end()) {
      loop_.report("channel: cannot ask instance " + std::to_string(request.instance) +
                   " for its stacks: no host speaks for it");
      continue;
    }
    loop_.peers().at(route->second)->send(request);
  }
}

Server::Server(ServerOptions options, ServerCallbacks callbacks)
    : loop_(std::make_unique<Loop>(std::move(options), std::move(callbacks))) {}
Server::~Server() { stop(); }
int Server::port() const { return loop_->port(); }
void Server::request_stacks(std::int32_t instance, std::chrono::milliseconds wait) {
  loop_->request(Request{instance, static_cast<std::uint32_t>(wait.count())});
}
PeerStats Server::stats() const { return loop_->stats(); }
void Server::stop() noexcept { loop_->stop(); }

}  // namespace popdist::cli::channel
