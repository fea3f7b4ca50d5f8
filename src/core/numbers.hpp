#pragma once
// Strict decimal parsing of launcher and POPDIST_* variables. Horovod's strtol turns "abc" into 0
// and "4x" into 4; here anything but plain decimal digits is an EnvironmentError that names the
// variable, its value and what was expected.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "popdist/environment.hpp"

namespace popdist::detail {

/// What a variable may hold.
enum class Expect {
  NonNegative,  ///< an index or offset: 0..INT_MAX
  Positive,     ///< a count: 1..INT_MAX
};

/// Longest stretch of a value shown in an error message (as the CLI's `shown`): a million-digit
/// rank must not become a megabyte of message.
inline constexpr std::size_t kMaxPrintableChars = 64;

/// `value` for an error message: control characters escaped (\r, \n, \t, \xHH), so that a
/// CRLF env file's "4\r" shows as '4\r' instead of sending the terminal back to column 0, and
/// cut after kMaxPrintableChars bytes with "... (N bytes)".
[[nodiscard]] std::string printable(std::string_view value);

/// "a decimal integer >= 1 (at most 2147483647)" and friends, for error messages.
[[nodiscard]] std::string describe_expectation(Expect expect);

/// Parses `value` (of variable `name`) as a plain decimal int: digits only (no sign, no spaces,
/// no '+'), no trailing characters, at most INT_MAX, and >= 1 for Expect::Positive.
/// Throws EnvironmentError naming `name`, `value` and the expectation.
[[nodiscard]] int parse_decimal(std::string_view name, std::string_view value, Expect expect);

/// A variable read from an environment and parsed: its value and its name (the provenance).
struct Number {
  int value = 0;
  std::string source;  ///< the variable that supplied it
};

/// Reads and parses `name`; std::nullopt when unset. Set-but-empty is an error.
[[nodiscard]] std::optional<Number> read_number(const EnvLookup& env, const std::string& name, Expect expect);

}  // namespace popdist::detail
