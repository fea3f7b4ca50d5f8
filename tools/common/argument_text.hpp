#pragma once
// A value the user typed, fit for an error message: quoted, with control and non-ASCII bytes
// escaped (a NUL would cut the message off, a '\r' would send the terminal back to column 0) and
// shortened when huge (a 10 MB value must not be echoed whole).

#include <cstddef>
#include <string>
#include <string_view>

namespace popdist::cli {

/// Longest stretch of a value quoted in a message; the rest is summarized by its length.
inline constexpr std::size_t kMaxShownChars = 64;

/// `value` in single quotes, escaped (\n, \r, \t, \0, \xHH, \\, \') and cut after
/// kMaxShownChars characters with "... (N bytes)".
[[nodiscard]] std::string shown(std::string_view value);

}  // namespace popdist::cli
