// The channel's authenticated decoder (tools/channel/session.hpp, frame.hpp) over fuzz bytes, as a
// stranger on the network would send them: (1) the bytes as a stream into an accepting end (the
// handshake's Hello, Welcome and Proof, then sealed frames), answered as the server would; (2)
// every frame body the bytes hold that decodes, sealed by one end of an established session and
// opened by the other (it must come back whole), then with one byte the input picks altered (it
// must be refused). FrameError is the decoder's own refusal; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "channel/frame.hpp"
#include "channel/session.hpp"

namespace {

using namespace popdist::cli::channel;

const std::string kKey(64, 'a');

void as_stranger(std::string_view bytes) {
  Session server(kKey);
  FrameDecoder decoder;
  decoder.feed(bytes);
  try {
    while (auto body = decoder.next_body())
      if (std::holds_alternative<Hello>(server.open(*body))) (void)server.answer();
  } catch (const FrameError&) {
  }
}

void sealed_both_ways(std::string_view bytes) {
  Session client(kKey), server(kKey);
  (void)server.open(client.hello("h", Role::kRelay, {0}).substr(kFrameHeaderBytes));
  const std::string welcome = server.answer().substr(kFrameHeaderBytes);
  (void)server.open(client.prove(std::get<Welcome>(decode_body(welcome))).substr(kFrameHeaderBytes));
  FrameDecoder decoder;
  decoder.feed(bytes);
  try {
    while (auto body = decoder.next_body()) {
      Message message;
      try {
        message = decode_body(*body);
      } catch (const FrameError&) {
        continue;
      }
      std::string frame;
      try {
        frame = client.seal(message);
      } catch (const FrameError&) {  // too large with its tag
        continue;
      }
      std::string altered = frame.substr(kFrameHeaderBytes);
      const std::size_t at = body->empty() ? 0 : static_cast<unsigned char>(body->back()) % altered.size();
      altered[at] = static_cast<char>(altered[at] ^ 0x5a);
      bool refused = false;
      try {
        (void)server.open(altered);
      } catch (const FrameError&) {
        refused = true;
      }
      if (!refused) std::abort();  // an altered frame passed its tag
      if (encode(server.open(frame.substr(kFrameHeaderBytes))) != encode(message)) std::abort();
    }
  } catch (const FrameError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  as_stranger(bytes);
  sealed_both_ways(bytes);
  return 0;
}
