// The host's beat (relay.hpp): one Beat per host per interval reaches popdist run, from the host's
// relay, however many agents the host has; a relay whose own agent is done beats on while it
// lingers for its host's other agents, and stops when the last of them is gone.
#include <catch2/catch.hpp>

#include <thread>

#include "channel_support.hpp"
#include "channel/client.hpp"

using namespace channel_support;

namespace {

constexpr auto kBeat = 100ms;

ClientOptions beating(const TestServer& test, const std::string& host, std::int32_t instance) {
  ClientOptions options;
  options.secret = test.secret;
  options.tag = test.tag;
  options.server_address = "127.0.0.1";
  options.server_port = test.server.port();
  options.host = host + "-" + test.tag;  // unique per test: abstract names are global
  options.instance = instance;
  options.beat_interval = kBeat;
  options.connect_timeout = 20s;
  options.relay_linger = 10s;
  return options;
}

/// `count` agents of one host, connected one after another: the first is its relay.
std::vector<std::unique_ptr<Client>> host_agents(const TestServer& test, const std::string& host, int count) {
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < count; ++i) clients.push_back(std::make_unique<Client>(beating(test, host, i)));
  return clients;
}

/// The Beats that reached the server during `window`.
std::size_t beats_during(TestServer& test, std::chrono::milliseconds window) {
  const std::size_t before = test.collector.of_type<Beat>().size();
  std::this_thread::sleep_for(window);
  return test.collector.of_type<Beat>().size() - before;
}

}  // namespace

TEST_CASE("the host's beat goes out from its relay at its interval") {
  TestServer test;
  Client client(beating(test, "beats", 0));
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Beat>() >= 5; }, 5s));
  const auto beats = test.collector.of_type<Beat>();
  CHECK(std::get<Beat>(beats[0].message).sequence == 0);
  CHECK(std::get<Beat>(beats[4].message).sequence == 4);
  CHECK(std::get<Beat>(beats[0].message).instance == kHostBeat);
  CHECK(beats[4].arrived - beats[0].arrived >= 3 * kBeat);
}

TEST_CASE("8 agents on one host: one Beat per interval reaches popdist run, not one per agent") {
  TestServer test;
  auto clients = host_agents(test, "beats8", 8);
  REQUIRE(clients[0]->is_relay());
  std::this_thread::sleep_for(3 * kBeat);  // every agent's timer running
  const std::size_t beats = beats_during(test, 10 * kBeat);
  CHECK(beats >= 5);   // about 10 ...
  CHECK(beats <= 13);  // ... where one per agent would be about 80
  const auto all = test.collector.of_type<Beat>();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& beat = std::get<Beat>(all[i].message);
    CHECK(all[i].host == "beats8-" + test.tag);
    CHECK(beat.instance == kHostBeat);
    CHECK(beat.sequence == i);  // one sender: the relay
  }
  for (auto it = clients.rbegin(); it != clients.rend(); ++it) it->reset();  // the relay last: no linger
}

TEST_CASE("a lingering relay beats while its host's agents live, and stops when the last is gone") {
  TestServer test;
  auto clients = host_agents(test, "linger-beats", 3);
  REQUIRE(clients[0]->is_relay());
  std::thread closing([&] { clients[0]->close(); });  // its own agent is done: it lingers for the others
  std::this_thread::sleep_for(2 * kBeat);
  CHECK(beats_during(test, 5 * kBeat) >= 3);
  clients[1]->close();
  std::this_thread::sleep_for(2 * kBeat);
  CHECK(beats_during(test, 5 * kBeat) >= 3);  // one local agent still lives
  clients[2]->close();
  closing.join();  // the relay stopped with its last local agent gone
  CHECK(beats_during(test, 5 * kBeat) == 0);
  CHECK(test.server.stats().open_authenticated == 0);
}
