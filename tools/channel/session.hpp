#pragma once
// One connection's authentication, both ways, with the job's key never on the wire: the
// connecting end's Hello carries a fresh nonce; the accepting end answers with a Welcome carrying
// its own nonce and a proof; the connecting end checks that proof and proves back (Proof). Each
// proof and each direction's frame key is a slice of HKDF(job key, salt: both nonces, info: a
// label and the Hello's bytes), so a proof says "I hold the job's key, in this connection, for this Hello", and a
// recorded one is worth nothing in another connection. After the handshake every frame carries an
// HMAC-SHA256 tag over its direction's implicit sequence number (frames sealed so far), its type
// and its payload: a replayed, forged, altered, reordered, dropped-then-continued or
// cross-connection frame fails its tag, and the connection is closed (HandshakeError or
// FrameError). The cryptography is libcrypto's (crypto.hpp).
//
// Sealed frame: u32 length (of what follows), u8 type, payload, 32-byte tag; the handshake's three
// frames (Hello, Welcome, Proof) are plain frames (frame.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channel/frame.hpp"

namespace popdist::cli::channel {

/// A handshake that failed: not a Hello first, a Proof or Welcome that does not prove the key, a
/// frame sent before its turn. The peer is refused as one without the key.
class HandshakeError : public FrameError {
 public:
  using FrameError::FrameError;
};

class Session {
 public:
  /// `job_key`: the job's key as 64 hex digits (secret.hpp); throws std::invalid_argument otherwise.
  explicit Session(std::string_view job_key);

  // The connecting end (a relay to popdist run, an agent to its host's relay).
  /// The Hello frame, with a fresh nonce.
  [[nodiscard]] std::string hello(std::string host, Role role, std::vector<std::int32_t> instances);
  /// Checks the Welcome's proof (HandshakeError when it does not prove the key); the session is
  /// then established, and this returns the Proof frame to send.
  [[nodiscard]] std::string prove(const Welcome& welcome);

  // The accepting end (popdist run's server, a relay for its agents).
  /// The Hello read first (open()), as sent.
  [[nodiscard]] const std::optional<Hello>& peer_hello() const { return hello_; }
  /// Answers the Hello read: a Welcome frame with a fresh nonce and this end's proof. The Proof
  /// that must come back is checked by open(), which establishes the session.
  [[nodiscard]] std::string answer();

  // Both.
  [[nodiscard]] bool established() const { return state_ == State::kEstablished; }
  /// The next frame sent, sealed with its tag; throws std::logic_error before the handshake.
  [[nodiscard]] std::string seal(const Message& message);
  /// The message of the next frame's body (FrameDecoder::next_body): plain during the handshake,
  /// checked against its tag afterwards. Throws HandshakeError / FrameError (the peer is refused).
  [[nodiscard]] Message open(std::string_view body);

  /// Frames sealed and opened so far (the sequence numbers of the next ones).
  [[nodiscard]] std::uint64_t sent() const { return sent_; }
  [[nodiscard]] std::uint64_t received() const { return received_; }

 private:
  enum class State { kNew, kHelloSent, kHelloRead, kAnswered, kEstablished };
  struct Keys {
    std::string frames_up, frames_down, proof_up, proof_down;
  };
  [[nodiscard]] Keys derive(std::string_view client_nonce, std::string_view server_nonce) const;
  Message open_handshake(std::string_view body);

  std::string job_key_;  // 32 bytes
  State state_ = State::kNew;
  std::string hello_body_;  // the Hello as sent: bound into every key
  std::optional<Hello> hello_;
  std::string nonce_;         // this end's
  std::string expected_proof_;
  std::string send_key_, receive_key_;
  std::uint64_t sent_ = 0, received_ = 0;
};

}  // namespace popdist::cli::channel
