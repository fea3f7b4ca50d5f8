#pragma once
// The typed payload inside a frame (frame.hpp): big-endian integers and strings as a u32 length
// and their bytes. The reader checks every read against what is left and names the message and
// field it was reading, so a truncated or hostile payload is a clear error, never a read past the
// end or a huge allocation (a string's length is checked against the bytes present first).

#include <cstdint>
#include <string>
#include <string_view>

namespace popdist::cli::channel {

class PayloadWriter {
 public:
  void u8(std::uint8_t value) { bytes_.push_back(static_cast<char>(value)); }
  void u32(std::uint32_t value) { unsigned_bytes(value, 4); }
  void u64(std::uint64_t value) { unsigned_bytes(value, 8); }
  void i32(std::int32_t value) { u32(static_cast<std::uint32_t>(value)); }
  void i64(std::int64_t value) { u64(static_cast<std::uint64_t>(value)); }
  void string(std::string_view text);
  [[nodiscard]] std::string take() { return std::move(bytes_); }

 private:
  void unsigned_bytes(std::uint64_t value, int count);
  std::string bytes_;
};

/// Reads `payload` of the message named `message`; each read names its field for the error.
class PayloadReader {
 public:
  PayloadReader(std::string_view payload, const char* message) : rest_(payload), message_(message) {}

  [[nodiscard]] std::uint8_t u8(const char* field) { return static_cast<std::uint8_t>(unsigned_bytes(field, 1)); }
  [[nodiscard]] std::uint32_t u32(const char* field) { return static_cast<std::uint32_t>(unsigned_bytes(field, 4)); }
  [[nodiscard]] std::uint64_t u64(const char* field) { return unsigned_bytes(field, 8); }
  [[nodiscard]] std::int32_t i32(const char* field) { return static_cast<std::int32_t>(u32(field)); }
  [[nodiscard]] std::int64_t i64(const char* field) { return static_cast<std::int64_t>(u64(field)); }
  [[nodiscard]] std::string string(const char* field);
  /// A count of items of `item_bytes` each, checked against the bytes left.
  [[nodiscard]] std::uint32_t count(const char* field, std::size_t item_bytes);
  /// Throws unless every byte was read (`last_field` names where the reading stopped).
  void finish(const char* last_field) const;
  /// Throws a FrameError naming the message and `field`.
  [[noreturn]] void fail(const char* field, const std::string& what) const;

 private:
  std::uint64_t unsigned_bytes(const char* field, std::size_t count);
  std::string_view rest_;
  const char* message_;
};

}  // namespace popdist::cli::channel
