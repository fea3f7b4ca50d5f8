// popdist run's end of the channel (tools/channel/server.hpp) over loopback: a peer that proves
// the job's key is welcomed and heard; a stranger (a wrong key, garbage, an oversized frame,
// silence, a flood) is dropped with one clear line while the job's peers go on. (The handshake's
// and the tags' refusals one by one: test_session.cpp and test_forgery.cpp.)
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <thread>

#include "channel_support.hpp"
#include "channel/payload.hpp"
#include "channel/relay.hpp"

using namespace channel_support;

namespace {

/// A peer that proved the job's key and was welcomed.
JobPeer welcomed_peer(TestServer& test, const std::string& host, std::vector<std::int32_t> instances) {
  const auto before = test.server.stats().authenticated;
  JobPeer peer = join(test.server.port(), test.secret, host, std::move(instances));
  REQUIRE(eventually([&] { return test.server.stats().authenticated > before; }));  // its Proof was read
  return peer;
}

/// Sends `bytes` as a stranger; returns the error line the server reported for it.
std::string refusal_of(TestServer& test, const std::string& bytes) {
  const std::size_t before = test.collector.errors().size();
  Fd fd = raw_connect(test.server.port());
  REQUIRE(write_all(fd.get(), bytes));
  CHECK(closed_by_peer(fd.get(), 5s));
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() > before; }));
  return test.collector.errors().at(before);
}

/// The job's peer still gets through: a Started sent now arrives.
void check_still_heard(TestServer& test, JobPeer& peer, std::int32_t instance) {
  REQUIRE(peer.send(Started{instance, 4242}));
  CHECK(test.collector.wait_until([&] {
    return test.collector.count_locked<Started>([&](const Started& m) { return m.instance == instance; }) > 0;
  }));
}

}  // namespace

TEST_CASE("a peer with the key is welcomed and its messages arrive with its host") {
  TestServer test;
  JobPeer peer = welcomed_peer(test, "host-a", {0, 1});
  const auto before = std::chrono::steady_clock::now();
  REQUIRE(peer.send(Ended{1, 137, 5000, "Killed"}));
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == 1; }));
  const auto hello = test.collector.of_type<Hello>().at(0);
  CHECK(hello.host == "host-a");
  CHECK(std::get<Hello>(hello.message).nonce.empty());  // the connection's, not handed on
  CHECK(std::get<Hello>(hello.message).instances == std::vector<std::int32_t>{0, 1});
  const auto ended = test.collector.of_type<Ended>().at(0);
  CHECK(ended.host == "host-a");
  CHECK(ended.arrived >= before);
  CHECK(std::get<Ended>(ended.message).status == 137);
  CHECK(std::get<Ended>(ended.message).error_text == "Killed");
  CHECK(test.server.stats().authenticated == 1);
  CHECK(test.server.stats().open_authenticated == 1);
}

TEST_CASE("strangers are dropped with one clear line while the job's peer goes on") {
  TestServer test(300ms);
  JobPeer peer = welcomed_peer(test, "host-a", {0});
  PayloadWriter oversized;
  oversized.u32(1 << 20);
  const std::string garbage = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";  // "GET " read as a length
  CHECK_THAT(refusal_of(test, encode(Hello{"", "h", Role::kRelay, {}})),
             Catch::Contains("Hello: field 'nonce' has 0 bytes, expected 32"));
  CHECK_THAT(refusal_of(test, encode(Hello{make_secret(), "h", Role::kRelay, {}})),
             Catch::Contains("(a peer of an older popdist, which sends its key?)"));
  CHECK_THAT(refusal_of(test, encode(Started{0, 1})), Catch::Contains("first message is Started, expected Hello"));
  CHECK_THAT(refusal_of(test, garbage), Catch::Contains("frame of 1195725856 bytes exceeds the limit of 65536 bytes"));
  CHECK_THAT(refusal_of(test, oversized.take()), Catch::Contains("frame of 1048576 bytes exceeds the limit"));
  CHECK_THAT(refusal_of(test, std::string("\0\0\0\2\2\0", 6)), Catch::Contains("Started: field 'instance' is truncated"));
  CHECK_THAT(refusal_of(test, ""), Catch::Contains("no Hello within 300 ms"));
  CHECK_THAT(refusal_of(test, ""), Catch::StartsWith("channel: dropped the connection from 127.0.0.1:"));
  check_still_heard(test, peer, 0);
  const PeerStats stats = test.server.stats();
  CHECK(stats.refused_hello == 3);
  CHECK(stats.refused_input == 3);
  CHECK(stats.timed_out == 2);
  CHECK(stats.open_authenticated == 1);
}

TEST_CASE("a peer that sends garbage after its handshake is dropped too") {
  TestServer test;
  JobPeer peer = welcomed_peer(test, "host-b", {3});
  REQUIRE(write_all(peer.fd.get(), std::string("\0\0\0\1\x63", 5)));
  CHECK(closed_by_peer(peer.fd.get(), 5s));
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() == 1; }));
  CHECK_THAT(test.collector.errors().at(0), Catch::Contains("(host host-b): frame 0 of 1 bytes: too short for its tag"));
  JobPeer requester = welcomed_peer(test, "host-c", {4});
  REQUIRE(requester.send(Request{0}));
  CHECK(closed_by_peer(requester.fd.get(), 5s));
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() == 2; }));
  CHECK_THAT(test.collector.errors().at(1), Catch::Contains("a Request goes down, never up"));
}

TEST_CASE("a flood of idle connections neither starves the job's peers nor floods the log") {
  constexpr std::size_t kCap = 16;
  constexpr int kFlood = 400;
  TestServer test(2000ms, kCap);
  JobPeer peer = welcomed_peer(test, "host-a", {0});
  std::vector<Fd> flood;
  for (int i = 0; i < kFlood; ++i) {
    flood.push_back(raw_connect(test.server.port()));
    // Half a header: readable, never a frame -- the server may drop it between poll and read.
    REQUIRE(write_all(flood.back().get(), std::string(2, '\0')));
  }
  // A relay that arrives during the flood still gets in: the oldest stranger makes room.
  JobPeer late = welcomed_peer(test, "host-late", {1});
  check_still_heard(test, peer, 0);
  check_still_heard(test, late, 1);
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() > 0; }));
  const PeerStats stats = test.server.stats();
  CHECK(stats.refused_over_cap >= kFlood - kCap);
  CHECK(stats.open_authenticated == 2);
  const auto errors = test.collector.errors();
  CHECK(errors.size() < 5);  // reported once a second with the count, not once per connection
  CHECK_THAT(errors.at(0), Catch::Contains("the oldest of 16 waiting to say Hello: a flood of connections?"));
}

TEST_CASE("over the cap, the oldest connection still waiting for its Hello is the one dropped") {
  TestServer test(2000ms, 2);
  Fd oldest = raw_connect(test.server.port());
  Fd second = raw_connect(test.server.port());
  REQUIRE(eventually([&] { return test.server.stats().accepted == 2; }));
  Fd newest = raw_connect(test.server.port());
  CHECK(closed_by_peer(oldest.get(), 5s));
  CHECK(still_open(second.get()));
  CHECK(still_open(newest.get()));
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() == 1; }));
  CHECK(test.collector.errors().at(0) ==
        "channel: dropped the connection from 127.0.0.1:" + std::to_string(local_port(oldest.get())) +
            ", the oldest of 2 waiting to say Hello: a flood of connections? (1 dropped so far)");
  CHECK(test.server.stats().refused_over_cap == 1);
}

TEST_CASE("a Request goes to the host that speaks for the instance, or to every host") {
  TestServer test;
  JobPeer a = welcomed_peer(test, "host-a", {0, 1});
  JobPeer b = welcomed_peer(test, "host-b", {2, 3});
  const auto next_request = [](JobPeer& peer) -> std::int32_t {
    const auto message = peer.next();
    return message ? std::get<Request>(*message).instance : -100;
  };
  test.server.request_stacks(3);
  CHECK(next_request(b) == 3);
  test.server.request_stacks(kAllInstances);
  CHECK(next_request(a) == kAllInstances);  // host-a got nothing before it
  CHECK(next_request(b) == kAllInstances);
  test.server.request_stacks(9);
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() == 1; }));
  CHECK(test.collector.errors().at(0) == "channel: cannot ask instance 9 for its stacks: no host speaks for it");
}

TEST_CASE("the server stops cleanly with connections open") {
  auto test = std::make_unique<TestServer>();
  JobPeer peer = welcomed_peer(*test, "host-a", {0});
  Fd stranger = raw_connect(test->server.port());
  test.reset();
  CHECK(closed_by_peer(peer.fd.get(), 2s));
  CHECK(closed_by_peer(stranger.get(), 2s));
}

TEST_CASE("one relay per host: a second claim for a connected host is refused and named, the first goes on") {
  TestServer test;
  JobPeer first = welcomed_peer(test, "host-a", {0});
  JobPeer second = join(test.server.port(), test.secret, "host-a", {1});  // it proves the key, and still
  CHECK(closed_by_peer(second.fd.get(), 5s));
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() == 1; }));
  CHECK_THAT(test.collector.errors().at(0),
             Catch::Contains("(host host-a): a second relay for host host-a, which 127.0.0.1:" +
                             std::to_string(local_port(first.fd.get())) + " speaks for already"));
  CHECK(test.server.stats().refused_hello == 1);
  CHECK(test.server.stats().open_authenticated == 1);
  check_still_heard(test, first, 0);
  first.fd.reset();  // the host's relay goes: the next one it elects gets in
  REQUIRE(eventually([&] { return test.server.stats().open_authenticated == 0; }));
  JobPeer next = welcomed_peer(test, "host-a", {0});
  check_still_heard(test, next, 0);
}

TEST_CASE("a recorded frame replayed on its own connection or on another is refused, the record stays right") {
  TestServer test;
  JobPeer a = welcomed_peer(test, "host-a", {0});
  JobPeer b = welcomed_peer(test, "host-b", {1});
  const std::string ended = a.session.seal(Ended{0, 1, 0, "the real traceback", ErrorSource::kStderr});
  REQUIRE(write_all(a.fd.get(), ended));
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == 1; }));
  REQUIRE(write_all(b.fd.get(), ended));
  CHECK(closed_by_peer(b.fd.get(), 5s));
  REQUIRE(write_all(a.fd.get(), ended));
  CHECK(closed_by_peer(a.fd.get(), 5s));
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() == 2; }));
  const auto errors = test.collector.errors();
  CHECK_THAT(errors.at(0), Catch::Contains("(host host-b): frame 0 fails its tag"));
  CHECK_THAT(errors.at(1), Catch::Contains("(host host-a): frame 1 fails its tag"));
  CHECK(test.collector.of_type<Ended>().size() == 1);
  CHECK(test.server.stats().refused_input == 2);
}

TEST_CASE("a frame with one bit flipped is refused, named once, its connection closed") {
  TestServer test;
  JobPeer a = welcomed_peer(test, "host-a", {0});
  std::string ended = a.session.seal(Ended{0, 1, 0, "exit code 1", ErrorSource::kStderr});
  ended[kFrameHeaderBytes + 6] = static_cast<char>(ended[kFrameHeaderBytes + 6] ^ 0x01);  // the status
  REQUIRE(write_all(a.fd.get(), ended));
  CHECK(closed_by_peer(a.fd.get(), 5s));
  REQUIRE(test.collector.wait_until([&] { return test.collector.error_count_locked() == 1; }));
  CHECK_THAT(test.collector.errors().at(0), Catch::Contains("(host host-a): frame 0 fails its tag"));
  CHECK(test.collector.of_type<Ended>().empty());
}
