#pragma once
// The job's channel, on the wire: what an instance's agent tells `popdist run` (its start, end,
// activity, liveness, stack dumps) and the one thing `popdist run` asks back (dump stacks), as
// length-prefixed frames -- a u32 big-endian length, a u8 type, a payload -- with a hard size
// limit, so that every reader can bound its buffer and refuse a hostile peer before it allocates.
// Payloads are big-endian integers and u32-length strings read with bounds checks; a frame that
// does not decode names its type, its field and what was wrong. See README.md for the design.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace popdist::cli::channel {

/// The largest frame body (type byte + payload), so a frame is at most 4 + 64 KiB bytes.
inline constexpr std::size_t kMaxFrameBody = 64 * 1024;
/// The frame's header: the u32 length of its body.
inline constexpr std::size_t kFrameHeaderBytes = 4;

enum class MessageType : std::uint8_t {
  kHello = 1, kStarted = 2, kEnded = 3, kActivity = 4, kBeat = 5, kStackDump = 6, kRequest = 7, kWelcome = 8,
  kProof = 9,  // the connecting end's answer to a Welcome (session.hpp)
};

/// Who sends a Hello: a host's relay (the one connection of its host), or an agent.
enum class Role : std::uint8_t { kRelay = 1, kAgent = 2 };

/// Any instance, in a Request.
inline constexpr std::int32_t kAllInstances = -1;

/// The first frame of every connection: says who speaks, with a fresh nonce for the challenge and
/// response (session.hpp); never the job's key.
struct Hello {
  std::string nonce;
  std::string host;
  Role role = Role::kAgent;
  std::vector<std::int32_t> instances;  ///< the instances it speaks for
};
struct Started {
  std::int32_t instance = 0;
  std::int64_t pid = 0;
};
/// Where an Ended's error text comes from.
enum class ErrorSource : std::uint8_t { kStderr = 0, kTorchErrorFile = 1 };

/// How an instance ended. The age is measured on the sender's monotonic clock (end to send), so
/// the receiver places the end on its own clock (arrival - age) and no two hosts' clocks meet.
struct Ended {
  std::int32_t instance = 0;
  std::int32_t status = 0;      ///< as a shell reports it: the exit code, or 128 + the signal
  std::uint64_t age_ns = 0;     ///< from the end to the send
  std::string error_text;       ///< torch's error file, or the stderr tail
  ErrorSource error_source = ErrorSource::kStderr;
};
/// Output seen from an instance, for the stall watch: how long ago, on the sender's clock.
struct Activity {
  std::int32_t instance = 0;
  std::uint64_t age_ns = 0;
};
/// The host's agents are alive (not their programs): sent by the host's relay on a timer while
/// any of them lives, for kHostBeat (the host is the connection's).
struct Beat {
  std::int32_t instance = 0;
  std::uint64_t sequence = 0;
};
/// The instance of a relay's Beat: the whole host, no one instance.
inline constexpr std::int32_t kHostBeat = -1;
/// A faulthandler dump of all threads (empty when there is none), with the process that wrote it
/// and its main thread's ident (from the start-up hook's marker; pid 0: the instance has no hook).
struct StackDump {
  std::int32_t instance = 0;
  std::string text;
  std::int64_t pid = 0;
  std::uint64_t main_thread = 0;
};
/// Down from `popdist run`: dump the stacks of one instance, or of kAllInstances.
struct Request {
  std::int32_t instance = kAllInstances;
  std::uint32_t wait_ms = 5000;  ///< how long the agent waits for its program's dump
};

/// The answer to a Hello that was accepted: the receiver now counts the sender as one of its
/// own (a relay lingers for it; the sender knows its frames are read, not lost in a backlog).
/// It carries the accepting end's nonce and its proof that it holds the job's key (session.hpp).
struct Welcome {
  std::string nonce;
  std::string proof;
};
/// The connecting end's proof that it holds the job's key, after checking the Welcome's.
struct Proof {
  std::string proof;
};

using Message = std::variant<Hello, Started, Ended, Activity, Beat, StackDump, Request, Welcome, Proof>;

[[nodiscard]] MessageType type_of(const Message& message);
[[nodiscard]] const char* type_name(MessageType type);

/// A frame that cannot be encoded or decoded; after it, the connection is dropped.
class FrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The frame of `message`; throws FrameError when it would exceed the limit (fit the texts first).
[[nodiscard]] std::string encode(const Message& message);

/// Bytes a text may take in a StackDump or Ended so that its frame fits the limit.
inline constexpr std::size_t kMaxText = kMaxFrameBody - 64;

/// Which end of a text to keep when it must be cut to fit a frame.
enum class Keep { kHead, kTail };
/// `text` itself when it fits in `max_bytes`, else the kept end cut at a line boundary, with one
/// line saying how much was cut. A stderr tail keeps its tail; a faulthandler dump its head (it
/// writes the innermost frames first).
[[nodiscard]] std::string fit_text(std::string_view text, std::size_t max_bytes, Keep keep);

/// Reassembles frames from a byte stream. Its buffer never holds more than one frame's worth
/// beyond what was last fed: an oversized header is refused as soon as its 4 bytes arrive.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_body = kMaxFrameBody) : max_body_(max_body) {}

  void feed(std::string_view bytes) { buffer_.append(bytes); }
  /// The next complete message, or nothing until more bytes come. Throws FrameError (oversize,
  /// unknown type, a malformed payload naming its field); the decoder is then unusable.
  [[nodiscard]] std::optional<Message> next();
  /// The next complete frame's body (type, payload and, on an authenticated connection, its tag),
  /// undecoded; throws FrameError for an oversized length.
  [[nodiscard]] std::optional<std::string> next_body();
  [[nodiscard]] std::size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  std::size_t max_body_;
  std::string buffer_;
  std::size_t consumed_ = 0;
};

/// The body (type + payload) of one frame as a message; throws FrameError.
[[nodiscard]] Message decode_body(std::string_view body);

}  // namespace popdist::cli::channel
