#include "channel/client.hpp"

#include <cstdlib>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "channel/handshake.hpp"
#include "channel/job_key.hpp"
#include "channel/relay.hpp"
#include "io/read_write.hpp"
#include "io/unix_socket.hpp"
#include "io/wake_up.hpp"

namespace popdist::cli::channel {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLongestElectionPause = std::chrono::milliseconds(100);
// Names a host's relay may take, in order: strangers can squat on a few, never on all for long.
constexpr std::size_t kRelayNames = 4;

std::uint64_t age_ns(Clock::time_point since) {
  const auto age = Clock::now() - since;
  return age.count() < 0 ? 0 : static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(age).count());
}

/// After a half-close: true when the peer closed with what we wrote unread (a Unix socket then
/// reports ECONNRESET), false when it read everything and closed (EOF), or at the deadline.
bool closed_unread(int fd, Clock::time_point deadline) {
  char chunk[4096];
  for (;;) {
    const long got = io::read_by(fd, chunk, sizeof chunk, deadline);
    if (got > 0) continue;  // Requests now go unanswered
    return got < 0 && errno == ECONNRESET;
  }
}

std::string machine_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

void parse_address(const std::string& text, ClientOptions& options) {
  const auto colon = text.rfind(':');
  const std::string expected = " for " + std::string(kAddressVariable) + ", expected host:port";
  if (colon == std::string::npos || colon == 0) throw std::invalid_argument("'" + text + "'" + expected);
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  int port = 0;
  const auto [end, error] = std::from_chars(first, last, port);
  if (error != std::errc() || end != last || port < 1 || port > 65535)
    throw std::invalid_argument("port '" + std::string(first, last) + "' in '" + text + "'" + expected +
                                " with a port from 1 to 65535");
  options.server_address = host;
  options.server_port = port;
}

}  // namespace

std::string relay_socket_name(std::string_view tag, const std::string& host) {
  return "@popdist-channel/" + std::string(tag) + "/" + host;
}

ClientOptions client_options_from_environment(const EnvironmentLookup& lookup, std::int32_t instance) {
  ClientOptions options;
  JobKey key = job_key_from_environment(lookup);
  options.secret = std::move(key.key);
  options.tag = std::move(key.tag);
  const auto address = lookup(kAddressVariable);
  if (!address) throw std::invalid_argument(std::string(kAddressVariable) + " is not set: expected popdist run's host:port");
  parse_address(*address, options);
  if (const auto host = lookup(kHostVariable); host && !host->empty()) options.host = *host;
  if (const auto beat = lookup(kBeatVariable)) {
    // For measuring the beat's cost (tests/bench); 0 turns it off, which --host-timeout then misreads.
    char* end = nullptr;
    const long long ms = std::strtoll(beat->c_str(), &end, 10);
    if (beat->empty() || *end != '\0' || ms < 0) {
      throw std::invalid_argument(std::string(kBeatVariable) + "=" + *beat + ": expected milliseconds >= 0 (0: off)");
    }
    options.beat_interval = std::chrono::milliseconds(ms == 0 ? 1LL << 40 : ms);
  }
  options.instance = instance;
  return options;
}

class Client::Impl {
 public:
  explicit Impl(ClientOptions options) : options_(std::move(options)) {
    if (options_.host.empty()) options_.host = machine_host_name();
    if (!options_.on_error) options_.on_error = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    if (options_.tag.empty()) throw std::invalid_argument("channel: a client without the job's tag");
    std::lock_guard lock(link_mutex_);
    elect(Clock::now() + options_.connect_timeout);
    thread_ = std::thread([this] { run(); });
  }

  ~Impl() { close(options_.relay_linger); }

  void on_request(std::function<void(const Request&)> callback) {
    std::lock_guard lock(callback_mutex_);
    callback_ = std::move(callback);
  }

  bool send(Message message) {
    std::lock_guard lock(link_mutex_);
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (relay_ && relay_->alive()) return relay_->send(std::move(message)), true;
      if (link_.valid() && io::write_all(link_.get(), session_->seal(message))) return true;
      if (!reconnect()) return false;
    }
    return false;
  }

  bool is_relay() const {
    std::lock_guard lock(link_mutex_);
    return relay_ != nullptr;
  }

  bool send_ended(Ended ended, Clock::time_point ended_at) {
    const bool sent = send(ended);
    std::lock_guard lock(link_mutex_);
    last_ended_ = std::move(ended);
    last_ended_at_ = ended_at;
    return sent;
  }

  void close(std::chrono::milliseconds linger) noexcept {
    if (closed_.exchange(true)) return;
    wake_.signal();
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(link_mutex_);
    if (!relay_ && link_.valid() && last_ended_) confirm_last_ended();
    if (relay_) relay_->finish(linger);
    relay_.reset();
    link_.reset();
  }

  const ClientOptions& options() const { return options_; }

 private:
  enum class Slot { kJoined, kStranger, kBusy };

  // Bind the host's name and be its relay, or connect to the relay that did; again until one
  // works. A name held by a stranger (another user, or a process that cannot prove the job's key)
  // is passed over for the next one, in the same order by every agent of the host: a squatter on
  // a name delays the election by a handshake, it does not prevent it.
  void elect(Clock::time_point deadline) {
    for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, kLongestElectionPause)) {
      for (std::size_t slot = 0; slot < kRelayNames; ++slot) {
        const Slot taken = try_slot(slot, deadline);
        if (taken == Slot::kJoined) return;
        if (taken == Slot::kBusy) break;  // a relay starting, or one that just stopped: wait for it
      }
      if (Clock::now() + pause > deadline)
        throw std::runtime_error("channel: no relay for host " + options_.host + " within " +
                                 std::to_string(options_.connect_timeout.count()) + " ms");
      std::this_thread::sleep_for(pause);
    }
  }

  std::string relay_name(std::size_t slot) const {
    return relay_socket_name(options_.tag, options_.host) + (slot == 0 ? "" : "/" + std::to_string(slot));
  }

  Slot try_slot(std::size_t slot, Clock::time_point deadline) {
    const std::string name = relay_name(slot);
    if (io::Fd listener = io::listen_unix(name); listener.valid()) {
      relay_ = std::make_unique<Relay>(std::move(listener), relay_options(deadline),
                                       RelayCallbacks{[this](const Request& request) { dispatch(request); },
                                                      options_.on_error});
      return Slot::kJoined;
    }
    if (errno != EADDRINUSE)  // taken is the election lost; anything else is an error
      throw std::system_error(errno, std::generic_category(), "channel: bind host " + options_.host + "'s relay socket");
    io::Fd fd = io::connect_unix(name);
    if (!fd.valid()) return Slot::kBusy;
    if (!io::same_user(fd.get())) return stranger(name, "another user (uid " + std::to_string(io::peer_uid(fd.get())) + ")");
    try {
      const auto welcome_by = std::min(deadline, Clock::now() + options_.hello_deadline);
      auto session = shake_hands(fd.get(), options_.secret, options_.host, Role::kAgent, {options_.instance}, welcome_by);
      if (!session) return Slot::kBusy;
      link_ = std::move(fd);
      decoder_ = FrameDecoder();
      session_ = std::move(session);
      return Slot::kJoined;
    } catch (const HandshakeError& error) {
      return stranger(name, std::string("a process without the job's key (") + error.what() + ")");
    }
  }

  // Said once per name: the agent never sends a stranger more than its Hello.
  Slot stranger(const std::string& name, const std::string& who) {
    if (strangers_.insert(name).second)
      options_.on_error("channel: host " + options_.host + "'s relay socket " + name + " is held by " + who +
                        ": trying the next name");
    return Slot::kStranger;
  }

  RelayOptions relay_options(Clock::time_point deadline) const {
    RelayOptions relay;
    relay.secret = options_.secret;
    relay.host = options_.host;
    relay.server_address = options_.server_address;
    relay.server_port = options_.server_port;
    relay.instances = {options_.instance};
    relay.hello_deadline = options_.hello_deadline;
    relay.connect_deadline = deadline;
    relay.beat_interval = options_.beat_interval;
    return relay;
  }

  // The link is gone (the relay stopped or died): elect again. Called with link_mutex_ held.
  bool reconnect() {
    relay_.reset();
    link_.reset();
    ++generation_;
    try {
      elect(Clock::now() + options_.connect_timeout);
      resend_last_ended();
      return true;
    } catch (const std::exception& error) {
      options_.on_error(std::string("channel: instance ") + std::to_string(options_.instance) + " lost its channel: " +
                        error.what());
      return false;
    }
  }

  // The Ended again, to the relay just elected (its age counted anew). Called with link_mutex_ held.
  void resend_last_ended() {
    if (!last_ended_) return;
    Ended ended = *last_ended_;
    ended.age_ns = age_ns(last_ended_at_);
    if (relay_) relay_->send(std::move(ended));
    else if (link_.valid()) (void)io::write_all(link_.get(), session_->seal(ended));
  }

  // A relay that gives up (its agent ended, or it was killed) reads no more, and what its agents
  // wrote to it last is lost without acknowledgements: the kernel tells (a Unix socket closed with
  // unread data resets its peer). So the link is half-closed and the relay's close awaited; after
  // a reset the host's next relay gets the Ended again. Bounded by hello_deadline.
  void confirm_last_ended() noexcept {
    const auto deadline = Clock::now() + options_.hello_deadline;
    for (int attempt = 0; attempt < 2 && !relay_ && link_.valid(); ++attempt) {
      ::shutdown(link_.get(), SHUT_WR);
      if (!closed_unread(link_.get(), deadline)) return;
      link_.reset();
      try {
        elect(deadline);
      } catch (const std::exception& error) {
        options_.on_error(std::string("channel: instance ") + std::to_string(options_.instance) +
                          "'s end was lost with its relay, and no other relay took it: " + error.what());
        return;
      }
      resend_last_ended();
    }
  }

  void run();
  void read_link(std::uint64_t generation);
  void dispatch(const Request& request) {
    std::lock_guard lock(callback_mutex_);
    if (callback_) callback_(request);
  }

  ClientOptions options_;
  std::set<std::string> strangers_;  // relay names found held by strangers
  mutable std::mutex link_mutex_;  // relay_, link_, decoder_, session_, generation_, last_ended_
  std::unique_ptr<Relay> relay_;
  io::Fd link_;
  FrameDecoder decoder_;
  std::optional<Session> session_;  // link_'s
  std::uint64_t generation_ = 0;
  std::optional<Ended> last_ended_;  // kept until close, for a relay that loses it
  Clock::time_point last_ended_at_{};
  std::mutex callback_mutex_;
  std::function<void(const Request&)> callback_;
  io::WakeUp wake_;
  std::atomic<bool> closed_{false};
  std::thread thread_;
};

// The Requests that come down the link from the host's relay, and a look at least every beat
// interval at a relay of our own: when it lost popdist run, the host's agents elect again. (The
// host's beat is the relay's, relay.hpp.)
void Client::Impl::run() {
  auto next_look = Clock::now() + options_.beat_interval;
  while (!closed_) {
    int fd = -1;
    std::uint64_t generation = 0;
    {
      std::lock_guard lock(link_mutex_);
      if (relay_ && !relay_->alive()) reconnect();
      fd = link_.valid() ? link_.get() : -1;
      generation = generation_;
    }
    pollfd fds[] = {{wake_.fd(), POLLIN, 0}, {fd, POLLIN, 0}};
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_look - Clock::now()).count();
    if (poll(fds, 2, static_cast<int>(std::max<long>(wait, 0) + 1)) < 0 && errno != EINTR) break;
    if (fds[0].revents) wake_.drain();
    if (closed_) break;
    if (fds[1].revents) read_link(generation);
    if (Clock::now() >= next_look) next_look = std::max(next_look + options_.beat_interval, Clock::now());
  }
}

void Client::Impl::read_link(std::uint64_t generation) {
  std::vector<Request> requests;
  {
    std::lock_guard lock(link_mutex_);
    if (generation != generation_ || !link_.valid()) return;  // replaced meanwhile
    char chunk[4096];
    const ssize_t got = recv(link_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    bool lost = got <= 0;
    if (!lost) {
      decoder_.feed(std::string_view(chunk, static_cast<std::size_t>(got)));
      try {
        while (auto body = decoder_.next_body()) {
          const Message message = session_->open(*body);
          if (const auto* request = std::get_if<Request>(&message)) requests.push_back(*request);
        }
      } catch (const FrameError& error) {
        options_.on_error(std::string("channel: bad frame from the host's relay: ") + error.what());
        lost = true;
      }
    }
    if (lost) reconnect();
  }
  for (const auto& request : requests) dispatch(request);
}

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Client::~Client() { impl_->close(impl_->options().relay_linger); }
void Client::on_request(std::function<void(const Request&)> callback) { impl_->on_request(std::move(callback)); }
bool Client::send_started(std::int64_t pid) { return impl_->send(Started{impl_->options().instance, pid}); }
bool Client::send_ended(int status, std::chrono::steady_clock::time_point ended_at, std::string_view error_text,
                        ErrorSource source) {
  return impl_->send_ended(
      Ended{impl_->options().instance, status, age_ns(ended_at), fit_text(error_text, kMaxText, Keep::kTail), source},
      ended_at);
}
bool Client::send_activity(std::chrono::steady_clock::time_point last_output) {
  return impl_->send(Activity{impl_->options().instance, age_ns(last_output)});
}
bool Client::send_stack_dump(std::string_view text, std::int64_t pid, std::uint64_t main_thread) {
  return impl_->send(StackDump{impl_->options().instance, fit_text(text, kMaxText, Keep::kHead), pid, main_thread});
}
bool Client::is_relay() const { return impl_->is_relay(); }
void Client::close() noexcept { impl_->close(impl_->options().relay_linger); }
void Client::close(std::chrono::milliseconds linger) noexcept { impl_->close(linger); }

}  // namespace popdist::cli::channel
