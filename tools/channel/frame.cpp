#include "channel/frame.hpp"

#include "channel/payload.hpp"

namespace popdist::cli::channel {
namespace {

void write_payload(PayloadWriter& out, const Hello& m) {
  out.string(m.nonce);
  out.string(m.host);
  out.u8(static_cast<std::uint8_t>(m.role));
  out.u32(static_cast<std::uint32_t>(m.instances.size()));
  for (const std::int32_t instance : m.instances) out.i32(instance);
}
void write_payload(PayloadWriter& out, const Started& m) { out.i32(m.instance), out.i64(m.pid); }
void write_payload(PayloadWriter& out, const Ended& m) {
  out.i32(m.instance), out.i32(m.status), out.u64(m.age_ns), out.string(m.error_text);
  out.u8(static_cast<std::uint8_t>(m.error_source));
}
void write_payload(PayloadWriter& out, const Activity& m) { out.i32(m.instance), out.u64(m.age_ns); }
void write_payload(PayloadWriter& out, const Beat& m) { out.i32(m.instance), out.u64(m.sequence); }
void write_payload(PayloadWriter& out, const StackDump& m) {
  out.i32(m.instance), out.string(m.text), out.i64(m.pid), out.u64(m.main_thread);
}
void write_payload(PayloadWriter& out, const Request& m) { out.i32(m.instance), out.u32(m.wait_ms); }
void write_payload(PayloadWriter& out, const Welcome& m) { out.string(m.nonce), out.string(m.proof); }
void write_payload(PayloadWriter& out, const Proof& m) { out.string(m.proof); }

Hello read_hello(PayloadReader& in) {
  Hello m;
  m.nonce = in.string("nonce");
  m.host = in.string("host");
  const std::uint8_t role = in.u8("role");
  if (role != static_cast<std::uint8_t>(Role::kRelay) && role != static_cast<std::uint8_t>(Role::kAgent))
    in.fail("role", "is " + std::to_string(role) + ", expected 1 (relay) or 2 (agent)");
  m.role = static_cast<Role>(role);
  const std::uint32_t count = in.count("instances", 4);
  m.instances.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.instances.push_back(in.i32("instances"));
  in.finish("instances");
  return m;
}

Message read_payload(MessageType type, PayloadReader& in) {
  switch (type) {
    case MessageType::kHello: return read_hello(in);
    case MessageType::kStarted: {
      Started m{in.i32("instance"), in.i64("pid")};
      return in.finish("pid"), m;
    }
    case MessageType::kEnded: {
      Ended m;
      m.instance = in.i32("instance"), m.status = in.i32("status"), m.age_ns = in.u64("age_ns");
      m.error_text = in.string("error_text");
      const std::uint8_t source = in.u8("error_source");
      if (source > static_cast<std::uint8_t>(ErrorSource::kTorchErrorFile))
        in.fail("error_source", "is " + std::to_string(source) + ", expected 0 (stderr) or 1 (torch error file)");
      m.error_source = static_cast<ErrorSource>(source);
      return in.finish("error_source"), m;
    }
    case MessageType::kActivity: {
      Activity m{in.i32("instance"), in.u64("age_ns")};
      return in.finish("age_ns"), m;
    }
    case MessageType::kBeat: {
      Beat m{in.i32("instance"), in.u64("sequence")};
      return in.finish("sequence"), m;
    }
    case MessageType::kStackDump: {
      StackDump m;
      m.instance = in.i32("instance"), m.text = in.string("text"), m.pid = in.i64("pid");
      m.main_thread = in.u64("main_thread");
      return in.finish("main_thread"), m;
    }
    case MessageType::kRequest: {
      Request m;
      m.instance = in.i32("instance"), m.wait_ms = in.u32("wait_ms");
      return in.finish("wait_ms"), m;
    }
    case MessageType::kWelcome: {
      Welcome m;
      m.nonce = in.string("nonce"), m.proof = in.string("proof");
      return in.finish("proof"), m;
    }
    case MessageType::kProof: {
      Proof m{in.string("proof")};
      return in.finish("proof"), m;
    }
  }
  throw FrameError("unknown message type " + std::to_string(static_cast<int>(type)));
}

bool is_known(std::uint8_t type) {
  return type >= static_cast<std::uint8_t>(MessageType::kHello) && type <= static_cast<std::uint8_t>(MessageType::kProof);
}

std::uint32_t read_length(std::string_view header) {
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kFrameHeaderBytes; ++i) length = (length << 8) | static_cast<unsigned char>(header[i]);
  return length;
}

}  // namespace

MessageType type_of(const Message& message) { return static_cast<MessageType>(message.index() + 1); }

const char* type_name(MessageType type) {
  static constexpr const char* kNames[] = {"Hello", "Started", "Ended", "Activity", "Beat", "StackDump", "Request", "Welcome", "Proof"};
  const auto index = static_cast<std::size_t>(type) - 1;
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

std::string encode(const Message& message) {
  PayloadWriter payload;
  std::visit([&payload](const auto& m) { write_payload(payload, m); }, message);
  const std::string body = payload.take();
  const std::size_t body_size = body.size() + 1;
  if (body_size > kMaxFrameBody)
    throw FrameError(std::string("cannot send a ") + type_name(type_of(message)) + " frame of " +
                     std::to_string(body_size) + " bytes: the limit is " + std::to_string(kMaxFrameBody));
  PayloadWriter frame;
  frame.u32(static_cast<std::uint32_t>(body_size));
  frame.u8(static_cast<std::uint8_t>(type_of(message)));
  return frame.take() + body;
}

Message decode_body(std::string_view body) {
  if (body.empty()) throw FrameError("empty frame: no message type");
  const auto type = static_cast<std::uint8_t>(body.front());
  if (!is_known(type))
    throw FrameError("unknown message type " + std::to_string(type) + ", expected 1 to " +
                     std::to_string(static_cast<int>(MessageType::kProof)));
  PayloadReader reader(body.substr(1), type_name(static_cast<MessageType>(type)));
  return read_payload(static_cast<MessageType>(type), reader);
}

std::optional<Message> FrameDecoder::next() {
  const auto body = next_body();
  if (!body) return std::nullopt;
  return decode_body(*body);
}

std::optional<std::string> FrameDecoder::next_body() {
  const std::string_view pending = std::string_view(buffer_).substr(consumed_);
  if (pending.size() < kFrameHeaderBytes) return std::nullopt;
  const std::uint32_t length = read_length(pending);
  if (length > max_body_)
    throw FrameError("frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                     std::to_string(max_body_) + " bytes");
  if (pending.size() < kFrameHeaderBytes + length) return std::nullopt;
  std::string body(pending.substr(kFrameHeaderBytes, length));
  consumed_ += kFrameHeaderBytes + length;
  // Compact once what was read outweighs what is left, so the buffer stays about one frame.
  if (consumed_ > buffer_.size() / 2) buffer_.erase(0, consumed_), consumed_ = 0;
  return body;
}

std::string fit_text(std::string_view text, std::size_t max_bytes, Keep keep) {
  if (text.size() <= max_bytes) return std::string(text);
  constexpr std::size_t kNoteRoom = 80;
  const std::size_t room = max_bytes > kNoteRoom ? max_bytes - kNoteRoom : 0;
  std::string_view kept = keep == Keep::kTail ? text.substr(text.size() - room) : text.substr(0, room);
  // Whole lines only: drop the partial line at the cut.
  if (keep == Keep::kTail) {
    const auto newline = kept.find('\n');
    if (newline != std::string_view::npos) kept.remove_prefix(newline + 1);
  } else {
    const auto newline = kept.rfind('\n');
    if (newline != std::string_view::npos) kept = kept.substr(0, newline + 1);
  }
  const std::string note = "[popdist: " + std::to_string(text.size() - kept.size()) +
                           " bytes cut to fit the channel's frame limit]\n";
  return keep == Keep::kTail ? note + std::string(kept) : std::string(kept) + note;
}

}  // namespace popdist::cli::channel
