// The agents' side (tools/channel/client.hpp, relay.hpp) over loopback, agents as threads and
// fake hosts as host names: one relay and one connection per host, every message arrives,
// Requests reach the agent they name, a relay lingers for its host's agents or hands over; and
// the loop it shares with the server (peer_loop.hpp) holds at the relay too: the Hello deadline,
// the cap's oldest-first drop and its one line a second.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "channel_support.hpp"
#include "channel/client.hpp"
#include "channel/relay.hpp"
#include "io/unix_socket.hpp"

using namespace channel_support;
using popdist::cli::io::connect_unix;
using popdist::cli::io::listen_unix;

namespace {

ClientOptions options_for(const TestServer& test, const std::string& host, std::int32_t instance) {
  ClientOptions options;
  options.secret = test.secret;
  options.tag = test.tag;
  options.server_address = "127.0.0.1";
  options.server_port = test.server.port();
  options.host = host + "-" + test.tag;  // unique per test: abstract names are global
  options.instance = instance;
  options.beat_interval = 3600s;
  options.connect_timeout = 20s;
  options.relay_linger = 10s;
  return options;
}

/// Closes the agents that are not relays first, as a job's agents end, so no relay lingers.
struct Agents : std::vector<std::unique_ptr<Client>> {
  explicit Agents(std::size_t count) : std::vector<std::unique_ptr<Client>>(count) {}
  Agents(Agents&&) = default;
  Agents& operator=(Agents&&) = default;
  ~Agents() {
    for (auto& client : *this)
      if (client && !client->is_relay()) client.reset();
  }
};

/// `agents` clients spread round-robin over `hosts` fake hosts, connected in parallel.
Agents connect_agents(const TestServer& test, int agents, int hosts, std::chrono::milliseconds linger = 10s) {
  Agents clients(static_cast<std::size_t>(agents));
  std::vector<std::thread> threads;
  for (int i = 0; i < agents; ++i)
    threads.emplace_back([&, i] {
      ClientOptions options = options_for(test, "host" + std::to_string(i % hosts), i);
      options.relay_linger = linger;
      clients[static_cast<std::size_t>(i)] = std::make_unique<Client>(options);
    });
  for (auto& thread : threads) thread.join();
  return clients;
}

/// A relay of its own for host `name` (made unique per test), with the cap and deadline given,
/// collecting its error lines.
struct TestRelay {
  TestRelay(const TestServer& test, const std::string& name, std::chrono::milliseconds hello_deadline, std::size_t cap)
      : host(name + "-" + test.tag),
        socket(relay_socket_name(test.tag, host)),
        relay(listen_unix(socket),
              RelayOptions{test.secret, host, "127.0.0.1", test.server.port(), {0}, hello_deadline, cap,
                           std::chrono::steady_clock::now() + 10s},
              RelayCallbacks{[](const Request&) {}, [this](const std::string& line) {
                               std::lock_guard lock(mutex);
                               errors.push_back(line);
                             }}) {}
  std::vector<std::string> error_lines() {
    std::lock_guard lock(mutex);
    return errors;
  }
  std::string host;
  std::string socket;
  std::mutex mutex;
  std::vector<std::string> errors;
  Relay relay;
};

std::size_t relays_among(const Agents& clients) {
  return static_cast<std::size_t>(std::count_if(clients.begin(), clients.end(), [](const auto& c) { return c->is_relay(); }));
}

}  // namespace

TEST_CASE("the agents of one host elect one relay and make one connection") {
  TestServer test;
  auto clients = connect_agents(test, 8, 1);
  CHECK(relays_among(clients) == 1);
  for (std::size_t i = 0; i < clients.size(); ++i) CHECK(clients[i]->send_started(1000 + static_cast<int>(i)));
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Started>() == 8; }));
  CHECK(test.server.stats().accepted == 1);
  CHECK(test.server.stats().open_authenticated == 1);
  CHECK(test.collector.of_type<Hello>().size() == 8);  // the relay's own and each local agent's, forwarded
}

TEST_CASE("64 agents on 8 hosts: 8 connections, and every Started and Ended arrives from its host") {
  TestServer test;
  auto clients = connect_agents(test, 64, 8);
  CHECK(relays_among(clients) == 8);
  const auto ended_at = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < clients.size(); ++i) {
    CHECK(clients[i]->send_started(static_cast<std::int64_t>(i) + 100));
    CHECK(clients[i]->send_ended(static_cast<int>(i % 3), ended_at, "tail of " + std::to_string(i)));
  }
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == 64; }));
  CHECK(test.collector.of_type<Started>().size() == 64);
  CHECK(test.server.stats().accepted == 8);
  std::set<std::int32_t> seen;
  for (const auto& delivery : test.collector.of_type<Ended>()) {
    const auto& ended = std::get<Ended>(delivery.message);
    seen.insert(ended.instance);
    CHECK(delivery.host.rfind("host" + std::to_string(ended.instance % 8) + "-", 0) == 0);
    CHECK(ended.status == ended.instance % 3);
    CHECK(ended.error_text == "tail of " + std::to_string(ended.instance));
    // The age covers the time from the end to the send, on the agent's clock.
    CHECK(delivery.arrived - std::chrono::nanoseconds(ended.age_ns) >= ended_at - 1ms);
    CHECK(delivery.arrived - std::chrono::nanoseconds(ended.age_ns) <= delivery.arrived);
  }
  CHECK(seen.size() == 64);
}

TEST_CASE("a Request reaches the agent it names, or every agent") {
  TestServer test;
  auto clients = connect_agents(test, 6, 2);
  std::vector<std::atomic<int>> asked(6);
  for (std::size_t i = 0; i < clients.size(); ++i) {
    clients[i]->on_request([&asked, i](const Request&) { ++asked[i]; });
    CHECK(clients[i]->send_started(1));
  }
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Started>() == 6; }));
  for (const std::int32_t instance : {3, 0}) {  // one behind a relay, one that may be a relay
    test.server.request_stacks(instance);
    REQUIRE(eventually([&] { return asked[static_cast<std::size_t>(instance)] == 1; }));
  }
  test.server.request_stacks(kAllInstances);
  REQUIRE(eventually([&] { return std::all_of(asked.begin(), asked.end(), [](const auto& n) { return n >= 1; }); }));
  std::this_thread::sleep_for(100ms);
  for (std::size_t i = 0; i < asked.size(); ++i) CHECK(asked[i] == (i == 3 || i == 0 ? 2 : 1));
}

TEST_CASE("a relay whose agent is done lingers until its host's other agents are") {
  TestServer test;
  auto clients = connect_agents(test, 4, 1);
  const auto relay = std::find_if(clients.begin(), clients.end(), [](const auto& c) { return c->is_relay(); });
  REQUIRE(relay != clients.end());
  std::thread closing([&] { (*relay)->close(); });  // lingers
  std::this_thread::sleep_for(200ms);
  for (auto& client : clients) {
    if (client == *relay) continue;
    CHECK(client->send_ended(0, std::chrono::steady_clock::now(), ""));
    client->close();
  }
  closing.join();
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == 3; }));
  CHECK(test.server.stats().accepted == 1);  // no new relay was needed
}

TEST_CASE("when the relay stops, the agents left elect another and go on") {
  TestServer test;
  auto clients = connect_agents(test, 4, 1, 0ms);
  auto relay = std::find_if(clients.begin(), clients.end(), [](const auto& c) { return c->is_relay(); });
  REQUIRE(relay != clients.end());
  relay->reset();  // the relay's agent ends without lingering
  REQUIRE(eventually([&] { return test.server.stats().accepted == 2; }));
  for (auto& client : clients)
    if (client) CHECK(client->send_ended(0, std::chrono::steady_clock::now(), ""));
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == 3; }));
  std::size_t relays = 0;
  for (auto& client : clients) relays += client && client->is_relay() ? 1 : 0;
  CHECK(relays == 1);
}

TEST_CASE("an Ended that a relay gave up unread reaches popdist run through the host's next relay") {
  TestServer test;
  const ClientOptions options = options_for(test, "dropping", 3);
  // A relay that welcomes the agent, then gives up (its own agent torn down) without reading on.
  Fd listener = listen_unix(relay_socket_name(options.tag, options.host));
  REQUIRE(listener.valid());
  Fd accepted;
  std::thread welcoming([&] {
    accepted = Fd(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    FrameDecoder decoder;
    Session session(test.secret);
    char chunk[512];
    while (accepted.valid()) {
      const ssize_t got = recv(accepted.get(), chunk, sizeof chunk, 0);
      if (got <= 0) return;
      decoder.feed(std::string_view(chunk, static_cast<std::size_t>(got)));
      while (auto body = decoder.next_body()) {
        if (std::holds_alternative<Hello>(session.open(*body))) (void)write_all(accepted.get(), session.answer());
        if (session.established()) return;  // the agent's Proof: welcomed
      }
    }
  });
  Client agent(options);
  welcoming.join();
  REQUIRE_FALSE(agent.is_relay());
  REQUIRE(agent.send_ended(137, std::chrono::steady_clock::now(), "killed"));  // into the relay's socket
  listener.reset();  // the name is free for the next relay, the Ended unread in its socket
  accepted.reset();
  agent.close(0ms);
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() >= 1; }));
  const auto ended = test.collector.of_type<Ended>();
  CHECK(ended.size() == 1);
  CHECK(std::get<Ended>(ended.at(0).message).instance == 3);
  CHECK(std::get<Ended>(ended.at(0).message).status == 137);
}

TEST_CASE("a relay with another key finds popdist run's proof wrong, and says so") {
  TestServer test;
  ClientOptions options = options_for(test, "wrong", 0);
  options.secret = make_secret();
  options.host = "wrong-" + test.tag;
  options.connect_timeout = 1s;
  CHECK_THROWS_WITH(Client(options), Catch::Contains("'s popdist run, or has another job key (Welcome whose proof does "
                                                     "not match: the peer does not hold the job's key)"));
  CHECK(test.server.stats().accepted == 1);  // the relay gave up at once: no retry with a key proven wrong
  CHECK(test.server.stats().authenticated == 0);
}

TEST_CASE("a stranger on the host's relay socket is dropped, and the relay goes on") {
  TestServer test;
  std::vector<std::string> relay_errors;
  std::mutex errors_mutex;
  ClientOptions options = options_for(test, "strangers", 0);
  options.on_error = [&](const std::string& line) { std::lock_guard lock(errors_mutex); relay_errors.push_back(line); };
  Client relay(options);
  REQUIRE(relay.is_relay());
  const std::string name = relay_socket_name(options.tag, options.host);
  Fd stranger = connect_unix(name);
  REQUIRE(stranger.valid());
  // A stranger with a key of its own: answered, then refused for its Proof.
  REQUIRE_THROWS_AS(shake_hands(stranger.get(), make_secret(), options.host, Role::kAgent, {7},
                                std::chrono::steady_clock::now() + 5s),
                    HandshakeError);
  REQUIRE(write_all(stranger.get(), encode(Proof{std::string(32, 'x')})));
  CHECK(closed_by_peer(stranger.get(), 5s));
  Fd garbage = connect_unix(name);
  REQUIRE(write_all(garbage.get(), std::string(16, '\xff')));
  CHECK(closed_by_peer(garbage.get(), 5s));
  CHECK(relay.send_started(5));
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Started>() == 1; }));
  std::lock_guard lock(errors_mutex);
  REQUIRE(relay_errors.size() == 2);
  CHECK_THAT(relay_errors[0], Catch::StartsWith("channel: host " + options.host + "'s relay dropped the connection from "
                                                "local pid " + std::to_string(getpid())) &&
                                 Catch::EndsWith(": Proof that does not match: the peer does not hold the job's key"));
  CHECK_THAT(relay_errors[1], Catch::Contains("exceeds the limit"));
}

TEST_CASE("a relay drops a local connection that says no Hello in time") {
  TestServer test;
  TestRelay relay(test, "silent", 300ms, 8);
  Fd silent = connect_unix(relay.socket);
  REQUIRE(silent.valid());
  CHECK(closed_by_peer(silent.get(), 5s));
  REQUIRE(eventually([&] { return relay.relay.stats().timed_out == 1; }));
  REQUIRE(relay.error_lines().size() == 1);
  CHECK(relay.error_lines().at(0) == "channel: host " + relay.host + "'s relay dropped the connection from local pid " +
                                         std::to_string(getpid()) + " (uid " + std::to_string(getuid()) +
                                         "): no Hello within 300 ms");
}

TEST_CASE("a flood of idle local connections: the relay drops the oldest, says so once a second, its agent gets in") {
  constexpr std::size_t kCap = 8;
  constexpr int kFlood = 200;
  TestServer test;
  TestRelay relay(test, "flooded", 2000ms, kCap);
  std::vector<Fd> flood;
  for (int i = 0; i < kFlood; ++i) {
    flood.push_back(connect_unix(relay.socket));
    REQUIRE(flood.back().valid());
    REQUIRE(write_all(flood.back().get(), std::string(2, '\0')));  // half a header: never a frame
  }
  ClientOptions options = options_for(test, "flooded", 1);
  REQUIRE(options.host == relay.host);
  Client agent(options);
  REQUIRE_FALSE(agent.is_relay());
  CHECK(agent.send_started(77));
  REQUIRE(test.collector.wait_until([&] {
    return test.collector.count_locked<Started>([](const Started& m) { return m.instance == 1; }) == 1;
  }));
  CHECK(relay.relay.stats().refused_over_cap >= kFlood - kCap);
  const auto errors = relay.error_lines();
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.size() < 5);  // reported once a second with the count, not once per connection
  CHECK_THAT(errors.at(0), Catch::StartsWith("channel: host " + relay.host + "'s relay dropped the connection from local pid") &&
                               Catch::Contains("the oldest of 8 waiting to say Hello: a flood of connections?"));
}

TEST_CASE("the agent's options come from the environment") {
  const std::string secret = make_secret();
  const std::string tag = make_job_tag();
  std::map<std::string, std::string> variables{{kSecretVariable, secret}, {kNonceVariable, make_job_nonce()},
                                               {kTagVariable, tag}, {kAddressVariable, "10.0.0.1:29500"}};
  const auto lookup = [&](const char* name) -> std::optional<std::string> {
    const auto found = variables.find(name);
    return found == variables.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
  auto options = client_options_from_environment(lookup, 5);
  CHECK(options.server_address == "10.0.0.1");
  CHECK(options.server_port == 29500);
  CHECK(options.instance == 5);
  CHECK(options.host.empty());
  CHECK(options.secret == secret);
  CHECK(options.tag == tag);
  variables[kAddressVariable] = "[::1]:7";
  variables[kHostVariable] = "fake-b";
  options = client_options_from_environment(lookup, 0);
  CHECK(options.server_address == "::1");
  CHECK(options.host == "fake-b");
  variables[kAddressVariable] = "host:99999";
  CHECK_THROWS_WITH(client_options_from_environment(lookup, 0),
                    "port '99999' in 'host:99999' for POPDIST_CHANNEL_ADDRESS, expected host:port with a port from 1 to 65535");
  variables.erase(kAddressVariable);
  CHECK_THROWS_WITH(client_options_from_environment(lookup, 0), Catch::StartsWith("POPDIST_CHANNEL_ADDRESS is not set"));
}

TEST_CASE("a stranger first on the host's relay socket name is passed over, named once, and told nothing") {
  TestServer test;
  const ClientOptions first = options_for(test, "squatted", 0);
  // A process of the same user with another key holds the name: it answers every Hello with a
  // Welcome it cannot prove, and records whatever comes after.
  Fd squatter = listen_unix(relay_socket_name(first.tag, first.host));
  REQUIRE(squatter.valid());
  std::atomic<std::size_t> told_after_welcome{0};
  std::atomic<bool> stop{false};
  std::thread squatting([&] {
    while (!stop) {
      pollfd entry{squatter.get(), POLLIN, 0};
      if (poll(&entry, 1, 50) <= 0) continue;
      Fd peer(accept4(squatter.get(), nullptr, nullptr, SOCK_CLOEXEC));
      Session session(make_secret());
      FrameDecoder decoder;
      char chunk[512];
      ssize_t got = 0;
      while ((got = recv(peer.get(), chunk, sizeof chunk, 0)) > 0) {
        decoder.feed(std::string_view(chunk, static_cast<std::size_t>(got)));
        while (auto body = decoder.next_body()) {
          if (session.peer_hello()) ++told_after_welcome;
          else if (std::holds_alternative<Hello>(session.open(*body))) (void)write_all(peer.get(), session.answer());
        }
      }
    }
  });
  std::vector<std::string> errors;
  std::mutex errors_mutex;
  Agents clients(3);
  for (std::int32_t i = 0; i < 3; ++i) {
    ClientOptions options = options_for(test, "squatted", i);
    options.on_error = [&](const std::string& line) { std::lock_guard lock(errors_mutex); errors.push_back(line); };
    clients[static_cast<std::size_t>(i)] = std::make_unique<Client>(options);
    CHECK(clients[static_cast<std::size_t>(i)]->send_started(100 + i));
  }
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Started>() == 3; }));
  CHECK(relays_among(clients) == 1);
  CHECK(test.server.stats().accepted == 1);
  stop = true;
  squatting.join();
  CHECK(told_after_welcome == 0);  // no agent proved anything to it, nor sent it a frame
  std::lock_guard lock(errors_mutex);
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.size() <= 3);  // once per agent that met it
  CHECK_THAT(errors.at(0), Catch::Contains("'s relay socket @popdist-channel/" + first.tag + "/" + first.host +
                                           " is held by a process without the job's key (Welcome whose proof does "
                                           "not match: the peer does not hold the job's key): trying the next name"));
}
