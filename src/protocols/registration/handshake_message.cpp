#include "protocols/registration/handshake_message.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "popdist/error.hpp"
#include "protocols/instance_sets.hpp"

namespace popdist::detail {
namespace {

/// A fixed-size value in this machine's byte order (the job runs one architecture).
template <typename Value>
void put(std::vector<char>& out, Value value) {
  const auto* bytes = reinterpret_cast<const char*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

void put_int(std::vector<char>& out, std::int32_t value) { put(out, value); }
void put_u64(std::vector<char>& out, std::uint64_t value) { put(out, value); }

void put_ints(std::vector<char>& out, const std::vector<int>& values) {
  put_int(out, static_cast<std::int32_t>(values.size()));
  for (const auto value : values) put_int(out, value);
}

void put_text(std::vector<char>& out, const std::string& text) {
  put_int(out, static_cast<std::int32_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

void put_digest(std::vector<char>& out, const SetDigest& digest) {
  put_int(out, digest.count);
  put_u64(out, digest.hash);
  put_u64(out, digest.mix);
}

void put_bitmap(std::vector<char>& out, const std::vector<std::uint8_t>& bits) {
  put_int(out, static_cast<std::int32_t>(bits.size()));
  out.insert(out.end(), bits.begin(), bits.end());
}

class Reader {
 public:
  Reader(const std::vector<char>& bytes, int source, const char* subject)
      : bytes_(bytes), source_(source), subject_(subject) {}
  std::int32_t get_int() { return get<std::int32_t>(); }
  std::uint64_t get_u64() { return get<std::uint64_t>(); }
  double get_double() { return get<double>(); }
  std::vector<int> get_ints() {
    const auto count = get_int();
    if (count < 0) malformed();
    std::vector<int> values;
    for (std::int32_t i = 0; i < count; ++i) values.push_back(get_int());
    return values;
  }
  SetDigest get_digest() {
    SetDigest digest;
    digest.count = get_int();
    digest.hash = get_u64();
    digest.mix = get_u64();
    return digest;
  }
  std::vector<std::uint8_t> get_bitmap() {
    const auto bits = get_text();
    return {bits.begin(), bits.end()};
  }
  std::string get_text() {
    const auto length = get_int();
    if (length < 0) malformed();
    need(static_cast<std::size_t>(length));
    std::string text(bytes_.data() + position_, static_cast<std::size_t>(length));
    position_ += static_cast<std::size_t>(length);
    return text;
  }
  [[noreturn]] void malformed() const {
    throw Error(fmt::format("{}: malformed handshake message ({} bytes) from instance {}", subject_, bytes_.size(),
                            source_));
  }

 private:
  /// The next fixed-size value, in the sender's byte order (the job runs one architecture).
  template <typename Value>
  Value get() {
    need(sizeof(Value));
    Value value{};
    std::memcpy(&value, bytes_.data() + position_, sizeof value);
    position_ += sizeof value;
    return value;
  }
  void need(std::size_t count) {
    if (position_ + count > bytes_.size()) malformed();
  }
  const std::vector<char>& bytes_;
  int source_;
  const char* subject_;
  std::size_t position_ = 0;
};

/// splitmix64's finalizer: a bijection that spreads every input bit over the output.
std::uint64_t splitmix64(std::uint64_t value) noexcept {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

/// The kinds that carry a bitmap of present positions (the roll calls' and the census's notice).
bool carries_bitmap(int kind) {
  return kind == HandshakeMessage::Roll || kind == HandshakeMessage::Census || kind == HandshakeMessage::Notice;
}

}  // namespace

SetDigest digest_of(const std::vector<int>& sorted_members) noexcept {
  SetDigest digest;
  digest.count = static_cast<std::int32_t>(sorted_members.size());
  digest.hash = set_hash(sorted_members);
  std::uint64_t position = 0;
  for (const auto member : sorted_members) {
    digest.mix += splitmix64((position++ << 32) ^ static_cast<std::uint32_t>(member));
  }
  return digest;
}

std::vector<char> encode(const HandshakeMessage& message) {
  // Each kind carries only its own fields after the common ones, so that Hellos stay short.
  std::vector<char> out;
  put_int(out, message.kind);
  put_digest(out, message.digest);
  put_ints(out, message.set);
  put_text(out, message.id);
  put_text(out, message.text);
  if (message.kind == HandshakeMessage::Mismatch) put_digest(out, message.other_digest);
  if (message.kind == HandshakeMessage::Roll || message.kind == HandshakeMessage::Census) {
    put_int(out, message.roll_kind);
    put_int(out, message.roll_level);
  }
  if (message.kind == HandshakeMessage::Roll) put(out, message.seconds);
  if (message.kind == HandshakeMessage::Census) put_int(out, message.census_epoch);
  if (carries_bitmap(message.kind)) put_bitmap(out, message.present);
  return out;
}

HandshakeMessage decode(const std::vector<char>& bytes, int source, const char* subject) {
  Reader reader(bytes, source, subject);
  HandshakeMessage message;
  message.kind = reader.get_int();
  message.digest = reader.get_digest();
  message.set = reader.get_ints();
  message.id = reader.get_text();
  message.text = reader.get_text();
  if (message.kind == HandshakeMessage::Mismatch) message.other_digest = reader.get_digest();
  if (message.kind == HandshakeMessage::Roll || message.kind == HandshakeMessage::Census) {
    message.roll_kind = reader.get_int();
    message.roll_level = reader.get_int();
  }
  if (message.kind == HandshakeMessage::Roll) message.seconds = reader.get_double();
  if (message.kind == HandshakeMessage::Census) message.census_epoch = reader.get_int();
  if (carries_bitmap(message.kind)) message.present = reader.get_bitmap();
  // A list travels with its digest; one that does not match it was not sent by this binary.
  if (!message.set.empty() && digest_of(message.set) != message.digest) reader.malformed();
  return message;
}

}  // namespace popdist::detail
