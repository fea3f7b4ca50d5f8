#include "core/numbers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <system_error>

#include "popdist/error.hpp"

namespace popdist::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[noreturn]] void reject(std::string_view name, std::string_view value, std::string_view problem, Expect expect) {
  throw EnvironmentError(
      fmt::format("{}='{}' {}; expected {}", name, printable(value), problem, describe_expectation(expect)));
}

}  // namespace

std::string printable(std::string_view value) {
  std::string text;
  std::size_t shown_bytes = std::min(value.size(), kMaxPrintableChars);
  // On a character boundary: half a UTF-8 sequence would make the message undecodable.
  while (shown_bytes < value.size() && shown_bytes > 0 &&
         (static_cast<unsigned char>(value[shown_bytes]) & 0xC0) == 0x80) {
    --shown_bytes;
  }
  text.reserve(shown_bytes);
  for (const char c : value.substr(0, shown_bytes)) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\r') {
      text += "\\r";
    } else if (c == '\n') {
      text += "\\n";
    } else if (c == '\t') {
      text += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      text += fmt::format("\\x{:02x}", byte);
    } else {
      text += c;
    }
  }
  if (shown_bytes < value.size()) text += fmt::format("... ({} bytes)", value.size());
  return text;
}

std::string describe_expectation(Expect expect) {
  return expect == Expect::Positive ? fmt::format("a decimal integer >= 1 (at most {})", INT_MAX)
                                    : fmt::format("a decimal integer >= 0 (at most {})", INT_MAX);
}

int parse_decimal(std::string_view name, std::string_view value, Expect expect) {
  if (value.empty()) reject(name, value, "is empty", expect);
  // A '-' followed only by digits is a well-formed negative number: say "negative", which is
  // more useful than "not a decimal number".
  if (value.front() == '-' && value.size() > 1 && std::all_of(value.begin() + 1, value.end(), is_digit)) {
    reject(name, value, "is negative", expect);
  }
  // from_chars alone would accept a leading '-'; it never accepts '+' or spaces, but checking the
  // first character ourselves keeps every non-digit start on one message.
  if (!is_digit(value.front())) reject(name, value, "is not a decimal number", expect);
  int parsed = 0;
  const auto* const first = value.data();
  const auto* const last = value.data() + value.size();
  const auto [end, error] = std::from_chars(first, last, parsed, 10);
  if (error == std::errc::result_out_of_range) {
    // Only the digits run overflowed; if garbage follows it is still "too large" first.
    reject(name, value, fmt::format("is too large (more than {})", INT_MAX), expect);
  }
  if (end != last) {
    reject(name, value,
           fmt::format("has trailing characters '{}' after the number", printable(std::string_view(end, last - end))),
           expect);
  }
  if (expect == Expect::Positive && parsed == 0) reject(name, value, "is zero", expect);
  return parsed;
}

std::optional<Number> read_number(const EnvLookup& env, const std::string& name, Expect expect) {
  const auto value = env(name);
  if (!value) return std::nullopt;
  return Number{parse_decimal(name, *value, expect), name};
}

}  // namespace popdist::detail
