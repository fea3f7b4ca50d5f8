// The channel's frames (tools/channel/frame.hpp): every message round-trips, a stream split at
// any byte decodes the same, and every decode error names what was wrong.
#include <catch2/catch.hpp>

#include "channel/frame.hpp"
#include "channel/payload.hpp"

using namespace popdist::cli::channel;

namespace {

std::vector<Message> decode_all(const std::string& bytes, std::size_t piece) {
  FrameDecoder decoder;
  std::vector<Message> messages;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    decoder.feed(std::string_view(bytes).substr(at, piece));
    while (auto message = decoder.next()) messages.push_back(std::move(*message));
  }
  return messages;
}

std::string frame_of(std::uint8_t type, const std::string& payload) {
  PayloadWriter out;
  out.u32(static_cast<std::uint32_t>(payload.size() + 1));
  out.u8(type);
  return out.take() + payload;
}

std::string decode_error(const std::string& bytes) {
  FrameDecoder decoder;
  decoder.feed(bytes);
  try {
    while (decoder.next()) {}
  } catch (const FrameError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("every message round-trips, fed whole or a byte at a time") {
  const std::vector<Message> sent = {
      Hello{"s3cret", "host-a", Role::kRelay, {0, 7, 4095}},
      Started{3, 123456789012},
      Ended{3, 137, 987654321, "Traceback (most recent call last):\nRuntimeError: boom\n", ErrorSource::kTorchErrorFile},
      Activity{5, 1500000000},
      Beat{2, 42},
      StackDump{1, "Thread 0x1 (most recent call first):\n  File \"x.py\", line 3 in f\n", 4242, 0x7f00ffee},
      Request{kAllInstances, 2500},
      Welcome{"a nonce", "a proof"},
      Proof{"its proof"},
  };
  std::string stream;
  for (const auto& message : sent) stream += encode(message);
  for (const std::size_t piece : {stream.size(), std::size_t{1}, std::size_t{7}}) {
    const auto received = decode_all(stream, piece);
    REQUIRE(received.size() == sent.size());
    CHECK(std::get<Hello>(received[0]).instances == std::vector<std::int32_t>{0, 7, 4095});
    CHECK(std::get<Hello>(received[0]).role == Role::kRelay);
    CHECK(std::get<Started>(received[1]).pid == 123456789012);
    CHECK(std::get<Ended>(received[2]).status == 137);
    CHECK(std::get<Ended>(received[2]).age_ns == 987654321u);
    CHECK(std::get<Ended>(received[2]).error_text == std::get<Ended>(sent[2]).error_text);
    CHECK(std::get<Activity>(received[3]).age_ns == 1500000000u);
    CHECK(std::get<Beat>(received[4]).sequence == 42u);
    CHECK(std::get<Ended>(received[2]).error_source == ErrorSource::kTorchErrorFile);
    CHECK(std::get<StackDump>(received[5]).text == std::get<StackDump>(sent[5]).text);
    CHECK(std::get<StackDump>(received[5]).pid == 4242);
    CHECK(std::get<StackDump>(received[5]).main_thread == 0x7f00ffeeu);
    CHECK(std::get<Request>(received[6]).instance == kAllInstances);
    CHECK(std::get<Request>(received[6]).wait_ms == 2500u);
    CHECK(std::get<Welcome>(received[7]).nonce == "a nonce");
    CHECK(std::get<Welcome>(received[7]).proof == "a proof");
    CHECK(std::get<Proof>(received[8]).proof == "its proof");
  }
}

TEST_CASE("the header is a big-endian length of the type byte and payload") {
  const std::string frame = encode(Request{0x01020304, 0x05060708});
  REQUIRE(frame.size() == 4 + 1 + 8);
  CHECK(frame.substr(0, 5) == std::string("\0\0\0\x09\7", 5));
  CHECK(frame.substr(5) == "\1\2\3\4\5\6\7\x08");
}

TEST_CASE("a frame over the limit is refused by its header, before its body arrives") {
  PayloadWriter header;
  header.u32(static_cast<std::uint32_t>(kMaxFrameBody + 1));
  CHECK(decode_error(header.take()) == "frame of 65537 bytes exceeds the limit of 65536 bytes");
  PayloadWriter huge;
  huge.u32(0xffffffffu);
  CHECK(decode_error(huge.take() + "garbage") == "frame of 4294967295 bytes exceeds the limit of 65536 bytes");
}

TEST_CASE("a frame exactly at the limit is accepted") {
  const std::string text(kMaxFrameBody - 1 - 4 - 4 - 8 - 8, 'x');  // type, instance, string length, pid, thread
  const std::string frame = encode(StackDump{0, text});
  CHECK(frame.size() == kFrameHeaderBytes + kMaxFrameBody);
  REQUIRE(decode_all(frame, 4096).size() == 1);
  CHECK_THROWS_WITH(encode(StackDump{0, text + "x"}),
                    "cannot send a StackDump frame of 65537 bytes: the limit is 65536");
}

TEST_CASE("unknown and missing types are errors") {
  CHECK(decode_error(frame_of(99, "")) == "unknown message type 99, expected 1 to 9");
  CHECK(decode_error(frame_of(0, "")) == "unknown message type 0, expected 1 to 9");
  CHECK(decode_error(std::string("\0\0\0\0", 4)) == "empty frame: no message type");
}

TEST_CASE("malformed payloads name the message and field") {
  CHECK(decode_error(frame_of(2, std::string(2, '\0'))) == "Started: field 'instance' is truncated: needs 4 bytes, 2 left");
  CHECK(decode_error(frame_of(2, std::string(4 + 8 + 1, '\0'))) == "Started: 1 unexpected bytes after the last field 'pid'");
  PayloadWriter ended;
  ended.i32(1), ended.i32(0), ended.u64(0), ended.u32(1000);
  CHECK(decode_error(frame_of(3, ended.take() + "short")) ==
        "Ended: field 'error_text' is truncated: its length says 1000 bytes, 5 left");
  PayloadWriter hello;
  hello.string("s"), hello.string("h"), hello.u8(9);
  CHECK(decode_error(frame_of(1, hello.take())) == "Hello: field 'role' is 9, expected 1 (relay) or 2 (agent)");
  PayloadWriter many;
  many.string("s"), many.string("h"), many.u8(2), many.u32(1000000);
  CHECK(decode_error(frame_of(1, many.take())) ==
        "Hello: field 'instances' is truncated: 1000000 items of 4 bytes, 0 bytes left");
  CHECK(decode_error(frame_of(8, "x")) == "Welcome: field 'nonce' is truncated: needs 4 bytes, 1 left");
  CHECK(decode_error(frame_of(9, std::string(4, '\0') + "x")) == "Proof: 1 unexpected bytes after the last field 'proof'");
}

TEST_CASE("an incomplete frame waits for more bytes") {
  const std::string frame = encode(Started{1, 2});
  FrameDecoder decoder;
  decoder.feed(frame.substr(0, frame.size() - 1));
  CHECK_FALSE(decoder.next());
  decoder.feed(frame.substr(frame.size() - 1));
  CHECK(std::get<Started>(*decoder.next()).pid == 2);
  CHECK(decoder.buffered() == 0);
}

TEST_CASE("texts too long for a frame are cut at a line, keeping the end asked for") {
  std::string lines;
  for (int i = 0; i < 20000; ++i) lines += "line " + std::to_string(i) + "\n";
  const std::string tail = fit_text(lines, kMaxText, Keep::kTail);
  CHECK(tail.size() <= kMaxText);
  CHECK(tail.rfind("line 19999\n") == tail.size() - 11);
  CHECK(tail.find("[popdist: ") == 0);
  CHECK(tail.find("\nline ") != std::string::npos);
  const std::string head = fit_text(lines, kMaxText, Keep::kHead);
  CHECK(head.size() <= kMaxText);
  CHECK(head.find("line 0\n") == 0);
  CHECK(head.find("bytes cut to fit the channel's frame limit]\n") != std::string::npos);
  CHECK_NOTHROW(encode(Ended{0, 1, 0, tail}));
  CHECK(fit_text("short", kMaxText, Keep::kTail) == "short");
}
