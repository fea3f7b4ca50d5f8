// One connection's authentication (tools/channel/session.hpp) without sockets: both ends prove the
// job's key without sending it, and every frame after the handshake is refused when it is
// replayed (on its own connection or another), altered by one bit, reordered, reflected, or sealed
// with another key.
#include <catch2/catch.hpp>

#include "channel/crypto.hpp"
#include "channel/secret.hpp"
#include "channel/session.hpp"

using namespace popdist::cli::channel;

namespace {

std::string body_of(const std::string& frame) { return frame.substr(kFrameHeaderBytes); }

/// Both ends of one connection, their handshake done, with the frames it took.
struct Pair {
  explicit Pair(const std::string& key, const std::string& server_key = "")
      : client(key), server(server_key.empty() ? key : server_key) {
    hello = client.hello("host-a", Role::kRelay, {0, 1});
    (void)server.open(body_of(hello));
    welcome = server.answer();
    proof = client.prove(std::get<Welcome>(decode_body(body_of(welcome))));
    (void)server.open(body_of(proof));
  }
  Session client, server;
  std::string hello, welcome, proof;
};

const Started kStarted{3, 4242};

}  // namespace

TEST_CASE("session: both ends prove the job's key, which is in no frame") {
  const std::string key = make_secret();
  Pair pair(key);
  CHECK(pair.client.established());
  CHECK(pair.server.established());
  const std::string raw_key = *crypto::from_hex(key);
  for (const std::string& frame : {pair.hello, pair.welcome, pair.proof}) {
    CHECK(frame.find(key) == std::string::npos);
    CHECK(frame.find(raw_key) == std::string::npos);
  }
  CHECK(pair.server.peer_hello()->host == "host-a");
  CHECK(std::get<Started>(pair.server.open(body_of(pair.client.seal(kStarted)))).pid == 4242);
  CHECK(std::get<Request>(pair.client.open(body_of(pair.server.seal(Request{2, 10})))).instance == 2);
}

TEST_CASE("session: another key fails at the connecting end's check, or at the Proof") {
  Session client(make_secret());
  Session server(make_secret());
  (void)server.open(body_of(client.hello("h", Role::kAgent, {0})));
  const auto welcome = std::get<Welcome>(decode_body(body_of(server.answer())));
  CHECK_THROWS_WITH(client.prove(welcome), "Welcome whose proof does not match: the peer does not hold the job's key");
  CHECK_THROWS_AS(server.open(body_of(encode(Proof{std::string(32, '\0')}))), HandshakeError);
  CHECK_FALSE(server.established());
}

TEST_CASE("session: a replayed Hello gets a new challenge, which the recorded Proof does not answer") {
  const std::string key = make_secret();
  Pair recorded(key);
  Session server(key);
  (void)server.open(body_of(recorded.hello));
  const auto welcome = std::get<Welcome>(decode_body(body_of(server.answer())));
  CHECK(welcome.nonce != std::get<Welcome>(decode_body(body_of(recorded.welcome))).nonce);
  CHECK_THROWS_WITH(server.open(body_of(recorded.proof)), "Proof that does not match: the peer does not hold the job's key");
  CHECK_FALSE(server.established());
}

TEST_CASE("session: a recorded frame replayed on its own connection, or on another, fails its tag") {
  const std::string key = make_secret();
  Pair pair(key), other(key);
  const std::string frame = pair.client.seal(kStarted);
  (void)pair.server.open(body_of(frame));
  CHECK_THROWS_WITH(pair.server.open(body_of(frame)), "frame 1 fails its tag (forged, altered, replayed, reordered or "
                                                      "from another connection)");
  CHECK_THROWS_AS(other.server.open(body_of(frame)), FrameError);  // frame 0 there too, other keys
  CHECK(other.server.received() == 0);
}

TEST_CASE("session: one bit flipped anywhere in a sealed frame's body fails its tag") {
  Pair pair(make_secret());
  const std::string body = body_of(pair.client.seal(Ended{1, 1, 7, "a traceback", ErrorSource::kStderr}));
  for (std::size_t bit = 0; bit < 8 * body.size(); ++bit) {
    std::string flipped = body;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    CHECK_THROWS_AS(pair.server.open(flipped), FrameError);
  }
  CHECK(std::get<Ended>(pair.server.open(body)).error_text == "a traceback");  // the original, still frame 0
}

TEST_CASE("session: frames out of order, or one dropped, fail their tag") {
  Pair pair(make_secret());
  const std::string first = pair.client.seal(kStarted);
  const std::string second = pair.client.seal(Activity{3, 5});
  const std::string third = pair.client.seal(Activity{3, 6});
  CHECK_THROWS_AS(pair.server.open(body_of(second)), FrameError);
  (void)pair.server.open(body_of(first));
  CHECK_THROWS_AS(pair.server.open(body_of(third)), FrameError);  // the second went missing
}

TEST_CASE("session: a frame reflected back to its sender fails its tag (each direction has its key)") {
  Pair pair(make_secret());
  const std::string down = pair.server.seal(Request{0, 1});
  CHECK_THROWS_AS(pair.server.open(body_of(down)), FrameError);
  const std::string up = pair.client.seal(kStarted);
  CHECK_THROWS_AS(pair.client.open(body_of(up)), FrameError);
}

TEST_CASE("session: the accepting end takes a Hello first, then the Proof, nothing else in between") {
  const std::string key = make_secret();
  Session first(key);
  CHECK_THROWS_WITH(first.open(body_of(encode(kStarted))), "first message is Started, expected Hello");
  Session early(key);
  Session client(key);
  (void)early.open(body_of(client.hello("h", Role::kAgent, {0})));
  CHECK_THROWS_WITH(early.open(body_of(encode(Proof{"x"}))), "Proof before the handshake was answered");
  Session answered(key);
  Session other_client(key);
  (void)answered.open(body_of(other_client.hello("h", Role::kAgent, {0})));
  (void)answered.answer();
  CHECK_THROWS_WITH(answered.open(body_of(encode(kStarted))), "Started instead of the Proof");
  CHECK_THROWS_AS(Session(key).seal(kStarted), std::logic_error);
}

TEST_CASE("session: a malformed key is refused without showing it") {
  CHECK_THROWS_WITH(Session("abc"), "the channel's job key holds 3 characters, expected 64 hex digits (its value is not shown)");
  CHECK_THROWS_AS(Session(std::string(64, 'z')), std::invalid_argument);
}

TEST_CASE("session: a sealed frame is its plain frame plus a 32-byte tag, and the largest text still fits") {
  Pair pair(make_secret());
  const std::string started = pair.client.seal(kStarted);
  CHECK(started.size() == encode(kStarted).size() + crypto::kTagBytes);
  (void)pair.server.open(body_of(started));
  const std::string text(kMaxText, 'x');
  const std::string dump = pair.client.seal(StackDump{0, text, 1, 2});
  CHECK(std::get<StackDump>(pair.server.open(body_of(dump))).text == text);
  CHECK(dump.size() <= kFrameHeaderBytes + kMaxFrameBody);
}
