#include "topology/json_writer.hpp"

#include <stdexcept>
#include <string>

namespace popdist::cli::topology_cmd {
namespace {

/// How many bytes of `text` from position i form one unit: a valid UTF-8 sequence (RFC 3629:
/// no overlong forms, no surrogates, nothing above U+10FFFF), or else the "maximal subpart" of
/// an invalid one, which becomes one U+FFFD (Unicode's recommended practice, as Python's
/// decode(errors="replace") does).
struct Utf8Unit {
  std::size_t length;
  bool valid;
};

Utf8Unit next_utf8_unit(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char second_min = 0x80, second_max = 0xBF;
  if (lead < 0x80) return {1, true};
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // above U+10FFFF
  } else {
    return {1, false};  // a stray continuation byte, C0/C1 (always overlong) or F5..FF
  }
  std::size_t k = 1;
  for (; k < length && i + k < text.size(); ++k) {
    const unsigned char b = byte(i + k);
    const bool ok = k == 1 ? (b >= second_min && b <= second_max) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
  }
  return {k, k == length};
}

}  // namespace

std::string json_quote(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '"';
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': quoted += "\\\""; ++i; continue;
      case '\\': quoted += "\\\\"; ++i; continue;
      case '\b': quoted += "\\b"; ++i; continue;
      case '\f': quoted += "\\f"; ++i; continue;
      case '\n': quoted += "\\n"; ++i; continue;
      case '\r': quoted += "\\r"; ++i; continue;
      case '\t': quoted += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      quoted += "\\u00";
      quoted += kHex[c >> 4];
      quoted += kHex[c & 0xF];
      ++i;
      continue;
    }
    const Utf8Unit unit = next_utf8_unit(text, i);
    if (unit.valid) {
      quoted.append(text.substr(i, unit.length));
    } else {
      quoted += "\\ufffd";  // the replacement character
    }
    i += unit.length;
  }
  quoted += '"';
  return quoted;
}

JsonWriter::JsonWriter(std::ostream& out, int indent) : out_(out), indent_(indent < 0 ? 0 : indent) {}

void JsonWriter::newline_and_indent(std::size_t depth) {
  if (indent_ == 0) return;
  out_ << '\n' << std::string(depth * static_cast<std::size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
  if (levels_.empty()) {
    if (complete_) throw std::logic_error("JsonWriter: a second top-level value");
    return;
  }
  Level& level = levels_.back();
  if (level.container == Container::Object) {
    if (!level.key_pending) throw std::logic_error("JsonWriter: a value inside an object needs a key first");
    level.key_pending = false;  // key() already wrote the comma and indentation
    return;
  }
  if (level.members++ > 0) out_ << ',';
  newline_and_indent(levels_.size());
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (levels_.empty() || levels_.back().container != Container::Object) {
    throw std::logic_error("JsonWriter: a key outside an object");
  }
  Level& level = levels_.back();
  if (level.key_pending) throw std::logic_error("JsonWriter: two keys without a value between them");
  if (level.members++ > 0) out_ << ',';
  newline_and_indent(levels_.size());
  out_ << json_quote(name) << (indent_ > 0 ? ": " : ":");
  level.key_pending = true;
  return *this;
}

void JsonWriter::open(Container container, char bracket) {
  before_value();
  out_ << bracket;
  levels_.push_back(Level{container});
}

void JsonWriter::close(Container container, char bracket) {
  if (levels_.empty() || levels_.back().container != container) {
    throw std::logic_error(std::string("JsonWriter: '") + bracket + "' does not close the open container");
  }
  if (levels_.back().key_pending) throw std::logic_error("JsonWriter: a key without a value");
  const bool empty = levels_.back().members == 0;
  levels_.pop_back();
  if (!empty) newline_and_indent(levels_.size());
  out_ << bracket;
  if (levels_.empty()) complete_ = true;
}

JsonWriter& JsonWriter::begin_object() {
  open(Container::Object, '{');
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  close(Container::Object, '}');
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  open(Container::Array, '[');
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  close(Container::Array, ']');
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ << json_quote(text);
  if (levels_.empty()) complete_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ << (flag ? "true" : "false");
  if (levels_.empty()) complete_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
  before_value();
  out_ << std::to_string(number);  // never the stream's locale (no digit grouping)
  if (levels_.empty()) complete_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::nullptr_t) {
  before_value();
  out_ << "null";
  if (levels_.empty()) complete_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(const std::optional<int>& number) {
  return number ? value(*number) : value(nullptr);
}

}  // namespace popdist::cli::topology_cmd
