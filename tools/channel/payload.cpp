#include "channel/payload.hpp"

#include "channel/frame.hpp"

namespace popdist::cli::channel {

void PayloadWriter::string(std::string_view text) {
  u32(static_cast<std::uint32_t>(text.size()));
  bytes_.append(text);
}

void PayloadWriter::unsigned_bytes(std::uint64_t value, int count) {
  for (int shift = (count - 1) * 8; shift >= 0; shift -= 8) bytes_.push_back(static_cast<char>((value >> shift) & 0xff));
}

void PayloadReader::fail(const char* field, const std::string& what) const {
  throw FrameError(std::string(message_) + ": field '" + field + "' " + what);
}

std::uint64_t PayloadReader::unsigned_bytes(const char* field, std::size_t count) {
  if (rest_.size() < count)
    fail(field, "is truncated: needs " + std::to_string(count) + " bytes, " + std::to_string(rest_.size()) + " left");
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < count; ++i) value = (value << 8) | static_cast<unsigned char>(rest_[i]);
  rest_.remove_prefix(count);
  return value;
}

std::string PayloadReader::string(const char* field) {
  const std::uint32_t size = u32(field);
  if (rest_.size() < size)
    fail(field, "is truncated: its length says " + std::to_string(size) + " bytes, " + std::to_string(rest_.size()) +
                    " left");
  std::string text(rest_.substr(0, size));
  rest_.remove_prefix(size);
  return text;
}

std::uint32_t PayloadReader::count(const char* field, std::size_t item_bytes) {
  const std::uint32_t items = u32(field);
  if (rest_.size() / item_bytes < items)
    fail(field, "is truncated: " + std::to_string(items) + " items of " + std::to_string(item_bytes) + " bytes, " +
                    std::to_string(rest_.size()) + " bytes left");
  return items;
}

void PayloadReader::finish(const char* last_field) const {
  if (!rest_.empty())
    throw FrameError(std::string(message_) + ": " + std::to_string(rest_.size()) +
                     " unexpected bytes after the last field '" + last_field + "'");
}

}  // namespace popdist::cli::channel
