#include "channel/session.hpp"

#include <stdexcept>

#include "channel/crypto.hpp"
#include "channel/payload.hpp"

namespace popdist::cli::channel {
namespace {

// Every key is its own slice of the key material (Keys: frames up, frames down, proof up, proof
// down), so no key or proof ever stands in for another (a proof up is never a proof down: no
// reflection; a frame key is never a proof).
constexpr std::string_view kLabelPrefix = "popdist channel 1 ";

std::string be64(std::uint64_t value) {
  PayloadWriter out;
  out.u64(value);
  return out.take();
}

std::string check_nonce(const std::string& nonce, const char* message) {
  if (nonce.size() != crypto::kNonceBytes)
    throw HandshakeError(std::string(message) + ": field 'nonce' has " + std::to_string(nonce.size()) +
                         " bytes, expected " + std::to_string(crypto::kNonceBytes) +
                         (nonce.size() == 64 ? " (a peer of an older popdist, which sends its key?)" : ""));
  return nonce;
}

}  // namespace

Session::Session(std::string_view job_key) {
  auto key = job_key.size() == 2 * crypto::kKeyBytes ? crypto::from_hex(job_key) : std::nullopt;
  if (!key)
    throw std::invalid_argument("the channel's job key holds " + std::to_string(job_key.size()) + " characters, expected " +
                                std::to_string(2 * crypto::kKeyBytes) + " hex digits (its value is not shown)");
  job_key_ = std::move(*key);
}

// One HKDF expand gives all four keys, each its own 32 bytes of the output (as SSH and IKE cut
// their key material): independent as separate labels would make them, at a quarter of the cost.
Session::Keys Session::derive(std::string_view client_nonce, std::string_view server_nonce) const {
  const std::string salt = std::string(client_nonce) + std::string(server_nonce);
  const std::string material =
      crypto::hkdf_sha256(job_key_, salt, std::string(kLabelPrefix) + "keys\n" + hello_body_, 4 * crypto::kKeyBytes);
  const auto key = [&](std::size_t index) { return material.substr(index * crypto::kKeyBytes, crypto::kKeyBytes); };
  return Keys{key(0), key(1), key(2), key(3)};
}

std::string Session::hello(std::string host, Role role, std::vector<std::int32_t> instances) {
  if (state_ != State::kNew) throw std::logic_error("channel: a session says Hello once");
  nonce_ = crypto::random_bytes(crypto::kNonceBytes);
  const std::string frame = encode(Hello{nonce_, std::move(host), role, std::move(instances)});
  hello_body_ = frame.substr(kFrameHeaderBytes);
  state_ = State::kHelloSent;
  return frame;
}

std::string Session::prove(const Welcome& welcome) {
  if (state_ != State::kHelloSent) throw std::logic_error("channel: a Welcome before a Hello was sent");
  const Keys keys = derive(nonce_, check_nonce(welcome.nonce, "Welcome"));
  if (!crypto::equal(welcome.proof, keys.proof_down))
    throw HandshakeError("Welcome whose proof does not match: the peer does not hold the job's key");
  send_key_ = keys.frames_up, receive_key_ = keys.frames_down;
  state_ = State::kEstablished;
  return encode(Proof{keys.proof_up});
}

std::string Session::answer() {
  if (state_ != State::kHelloRead) throw std::logic_error("channel: an answer without a Hello read");
  nonce_ = crypto::random_bytes(crypto::kNonceBytes);
  const Keys keys = derive(hello_->nonce, nonce_);
  send_key_ = keys.frames_down, receive_key_ = keys.frames_up, expected_proof_ = keys.proof_up;
  state_ = State::kAnswered;
  return encode(Welcome{nonce_, keys.proof_down});
}

std::string Session::seal(const Message& message) {
  if (state_ != State::kEstablished) throw std::logic_error("channel: sealing a frame before the handshake");
  std::string frame = encode(message);
  const std::string_view body = std::string_view(frame).substr(kFrameHeaderBytes);
  const std::string tag = crypto::hmac_sha256(send_key_, be64(sent_) + std::string(body));
  const std::size_t sealed = body.size() + tag.size();
  if (sealed > kMaxFrameBody)
    throw FrameError(std::string("cannot send a ") + type_name(type_of(message)) + " frame of " +
                     std::to_string(sealed) + " bytes with its tag: the limit is " + std::to_string(kMaxFrameBody));
  ++sent_;
  PayloadWriter header;
  header.u32(static_cast<std::uint32_t>(sealed));
  return header.take() + std::string(body) + tag;
}

Message Session::open(std::string_view body) {
  if (state_ != State::kEstablished) return open_handshake(body);
  if (body.size() <= crypto::kTagBytes)
    throw FrameError("frame " + std::to_string(received_) + " of " + std::to_string(body.size()) +
                     " bytes: too short for its tag");
  const std::string_view content = body.substr(0, body.size() - crypto::kTagBytes);
  const std::string expected = crypto::hmac_sha256(receive_key_, be64(received_) + std::string(content));
  if (!crypto::equal(body.substr(content.size()), expected))
    throw FrameError("frame " + std::to_string(received_) + " fails its tag (forged, altered, replayed, reordered " +
                     "or from another connection)");
  ++received_;
  return decode_body(content);
}

// The accepting end: a Hello first (answered by the owner, answer()), then the Proof, nothing else.
Message Session::open_handshake(std::string_view body) {
  Message message = decode_body(body);
  if (state_ == State::kNew) {
    auto* hello = std::get_if<Hello>(&message);
    if (!hello) throw HandshakeError(std::string("first message is ") + type_name(type_of(message)) + ", expected Hello");
    check_nonce(hello->nonce, "Hello");
    hello_body_ = std::string(body), hello_ = *hello, state_ = State::kHelloRead;
    return message;
  }
  if (state_ != State::kAnswered)
    throw HandshakeError(std::string(type_name(type_of(message))) + " before the handshake was answered");
  const auto* proof = std::get_if<Proof>(&message);
  if (!proof) throw HandshakeError(std::string(type_name(type_of(message))) + " instead of the Proof");
  if (!crypto::equal(proof->proof, expected_proof_))
    throw HandshakeError("Proof that does not match: the peer does not hold the job's key");
  state_ = State::kEstablished;
  return message;
}

}  // namespace popdist::cli::channel
