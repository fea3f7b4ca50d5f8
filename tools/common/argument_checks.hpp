#pragma once
// The value rules shared by `popdist run` and `popdist topology`, as CLI11 validators (so that a
// bad value is refused while parsing, naming the option) and as plain functions for values read
// after parsing. Numbers follow the environment's rule (design.md §3.1): plain decimal digits, no
// sign, no spaces, no 0x; empty values are errors.

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace popdist::cli {

/// The words PopRun takes for its boolean options.
inline constexpr std::string_view kSwitchWords = "yes/no, true/false, on/off or 1/0";

/// `text` (the value of `option`) as a whole number in [min, max]; throws UsageError naming the
/// option, the value as typed and the range otherwise.
[[nodiscard]] int parse_whole_number(std::string_view option, std::string_view text, int min, int max);

/// `text` (the value of `option`) as a PopRun boolean (yes/no/true/false/on/off/1/0, any case);
/// throws UsageError naming the option, the value and the accepted words otherwise.
[[nodiscard]] bool parse_switch(std::string_view option, std::string_view text);

/// Validator: a whole number in [min, max] ("what" names the unit in the message, e.g. "instances").
[[nodiscard]] CLI::Validator whole_number(int min, int max);

/// Validator: a PopRun boolean word.
[[nodiscard]] CLI::Validator switch_word();

/// Validator: a number of seconds, > 0 and finite (fractions allowed).
[[nodiscard]] CLI::Validator positive_seconds();
/// Validator: a number of seconds, >= 0 (0 turns the option off) and finite.
[[nodiscard]] CLI::Validator seconds_or_zero();

/// Validator: not empty.
[[nodiscard]] CLI::Validator not_empty();

/// Validator: an existing regular file (or '-' when `allow_stdin`). Checked with stat(), so a
/// fifo, a directory or a device is refused without being opened (opening a fifo with no writer
/// blocks forever).
[[nodiscard]] CLI::Validator regular_file(bool allow_stdin);

/// The message of every CLI11 parse error of the `popdist` command: "popdist <command>: error:
/// ...", the option named, and the value as typed where CLI11 kept it.
[[nodiscard]] std::string failure_message(const CLI::App* app, const CLI::Error& error);

}  // namespace popdist::cli
