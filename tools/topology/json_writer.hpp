#pragma once
// A small streaming JSON writer (RFC 8259) for `popdist topology --json`. None of popdist's
// dependencies writes JSON, and the output is a handful of objects, so a writer that gets the
// escaping and the commas right is all that is needed.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace popdist::cli::topology_cmd {

/// `text` as a JSON string literal, quotes included. Escapes `"`, `\` and every control
/// character below U+0020 (\b \f \n \r \t by name, the rest as \u00XX). Bytes that are not
/// valid UTF-8 (an environment may hold anything) become U+FFFD, one per maximal invalid
/// subpart as Python's decode(errors="replace") does, so the output is always valid JSON text.
[[nodiscard]] std::string json_quote(std::string_view text);

/// Writes one JSON value to a stream, pretty-printed with `indent` spaces per level (0: all on
/// one line). Misuse (a value where a key is expected, closing the wrong container, a second
/// top-level value) throws std::logic_error, so a bug cannot produce invalid JSON silently.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out, int indent = 2);

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  /// The next member's name; only inside an object, and must be followed by a value.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(std::nullptr_t);
  /// null when empty.
  JsonWriter& value(const std::optional<int>& number);

  /// True once one complete top-level value has been written.
  [[nodiscard]] bool complete() const noexcept { return complete_; }

 private:
  enum class Container { Object, Array };
  struct Level {
    Container container;
    int members = 0;
    bool key_pending = false;  // a key was written, its value is due
  };

  void before_value();              // comma, newline and indentation; checks that a value may come here
  void open(Container container, char bracket);
  void close(Container container, char bracket);
  void newline_and_indent(std::size_t depth);

  std::ostream& out_;
  int indent_;
  std::vector<Level> levels_;
  bool complete_ = false;
};

}  // namespace popdist::cli::topology_cmd
