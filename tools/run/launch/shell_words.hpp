#pragma once
// Splitting option values into words as a POSIX shell would (quotes and backslashes; no
// variable or glob expansion), and quoting words back for a command line a user can paste.

#include <string>
#include <string_view>
#include <vector>

namespace popdist::cli {

/// Splits `text` into words: blanks separate, '...' is literal, "..." honours \" \\ \$ \`,
/// a backslash outside quotes escapes the next character. Throws UsageError naming `what` and
/// the text for an unterminated quote or a trailing backslash.
[[nodiscard]] std::vector<std::string> split_shell_words(std::string_view text, std::string_view what);

/// The word quoted for a POSIX shell: unchanged when it needs no quoting, else in single quotes.
[[nodiscard]] std::string shell_quote(std::string_view word);

/// The words quoted and joined by single spaces.
[[nodiscard]] std::string shell_join(const std::vector<std::string>& words);

}  // namespace popdist::cli
