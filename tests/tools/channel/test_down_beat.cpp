// Liveness downwards (liveness.hpp): popdist run's server beats every host's relay over its one
// link, the relay passes each beat on to its host's agents, and every agent's last_heard() moves
// on -- one frame per host per interval on TCP, however many agents the host has; a relay's
// re-election leaves no gap longer than a few beats; a server that does not beat is never heard
// by an agent that is not a relay (a local relay's Welcome is not popdist run's word).
#include <catch2/catch.hpp>

#include <thread>

#include "channel_support.hpp"
#include "channel/client.hpp"
#include "channel/crypto.hpp"
#include "channel/liveness.hpp"

using namespace channel_support;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kBeat = 100ms;

/// A server on loopback beating down every `beat`.
struct BeatingServer {
  explicit BeatingServer(std::chrono::milliseconds beat)
      : secret(make_secret()), server(ServerOptions{"127.0.0.1", 0, secret, 2000ms, 64, beat}, collector.callbacks()) {}
  std::string secret;
  std::string tag = make_job_tag();  ///< the job's, in socket names; unique per test
  Collector collector;
  Server server;
};

ClientOptions agent_of(const BeatingServer& test, const std::string& host, std::int32_t instance) {
  ClientOptions options;
  options.secret = test.secret;
  options.server_address = "127.0.0.1";
  options.server_port = test.server.port();
  options.tag = test.tag;  // unique per test: abstract names are global
  options.host = host;
  options.instance = instance;
  options.beat_interval = 3600s;  // no beats up: only those down are looked at
  options.connect_timeout = 20s;
  options.relay_linger = 10s;
  return options;
}

/// Whether `client` hears popdist run after `since` within `timeout`.
bool hears_after(const Client& client, Clock::time_point since, std::chrono::milliseconds timeout = 5s) {
  return eventually([&] {
    const auto heard = client.last_heard();
    return heard && *heard > since;
  }, timeout);
}

/// The longest time without a word that `client` saw during `window`, sampled every few ms.
Clock::duration longest_silence(const Client& client, std::chrono::milliseconds window) {
  Clock::duration longest{};
  const auto end = Clock::now() + window;
  while (Clock::now() < end) {
    if (const auto heard = client.last_heard()) longest = std::max(longest, Clock::now() - *heard);
    std::this_thread::sleep_for(5ms);
  }
  return longest;
}

}  // namespace

TEST_CASE("popdist run's beat reaches the relay and its host's agents") {
  BeatingServer test(kBeat);
  Client relay(agent_of(test, "down", 0));
  Client agent(agent_of(test, "down", 1));
  REQUIRE(relay.is_relay());
  REQUIRE_FALSE(agent.is_relay());
  CHECK(relay.last_heard().has_value());  // popdist run's Welcome
  const auto now = Clock::now();
  CHECK(hears_after(relay, now));
  CHECK(hears_after(agent, now));
  CHECK(test.server.beats_sent().frames >= 1);
  CHECK(test.collector.errors().empty());
}

TEST_CASE("one beat per host per interval on the link, however many agents the host has") {
  BeatingServer test(kBeat);
  std::vector<std::unique_ptr<Client>> agents;
  for (int i = 0; i < 8; ++i) agents.push_back(std::make_unique<Client>(agent_of(test, "down8", i)));
  for (auto& agent : agents) REQUIRE(hears_after(*agent, Clock::now()));
  const auto before = test.server.beats_sent();
  std::this_thread::sleep_for(10 * kBeat);
  const auto after = test.server.beats_sent();
  CHECK(after.frames - before.frames >= 5);   // about 10 ...
  CHECK(after.frames - before.frames <= 13);  // ... where one per agent would be about 80
  // A sealed Beat: 17 bytes (length, type, instance, sequence) and its tag.
  CHECK(after.bytes - before.bytes == (17 + crypto::kTagBytes) * (after.frames - before.frames));
  for (auto it = agents.rbegin(); it != agents.rend(); ++it) it->reset();  // the relay last: no linger
}

TEST_CASE("a server that does not beat is heard by no agent but through its relay's Welcome") {
  BeatingServer test(3600s);
  Client relay(agent_of(test, "silent", 0));
  Client agent(agent_of(test, "silent", 1));
  REQUIRE(relay.is_relay());
  const auto welcomed = relay.last_heard();
  REQUIRE(welcomed.has_value());
  std::this_thread::sleep_for(5 * kBeat);
  CHECK(relay.last_heard() == welcomed);      // nothing since popdist run's Welcome
  CHECK_FALSE(agent.last_heard().has_value());  // the local relay's Welcome is not popdist run's word
}

TEST_CASE("a relay's re-election leaves its host's agents silent for a few beats at most") {
  BeatingServer test(kBeat);
  auto relay = std::make_unique<Client>(agent_of(test, "elect", 0));
  Client agent(agent_of(test, "elect", 1));
  REQUIRE(relay->is_relay());
  REQUIRE(hears_after(agent, Clock::now()));
  Clock::duration longest{};
  std::thread watching([&] { longest = longest_silence(agent, 30 * kBeat); });  // Catch2 checks on this thread only
  std::this_thread::sleep_for(5 * kBeat);
  relay->close(0ms);  // its program failed: no linger, the host's agents elect again
  relay.reset();
  watching.join();
  CHECK(longest < 20 * kBeat);  // well inside any --host-timeout
  CHECK(agent.is_relay());
  CHECK(hears_after(agent, Clock::now()));
}
