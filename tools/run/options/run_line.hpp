#pragma once
// `popdist run`'s command line, read so that one run reports every problem of it: CLI11 stops at
// the first bad option, so the words before the program are cut into one piece per option and
// each piece is parsed on its own (every error and warning, in command-line order); the options
// that parsed are then read together. Typos get a "did you mean".

#include <string>
#include <vector>

#include "run/options/run_options.hpp"

namespace popdist::cli {

/// The options (without the refused ones) and, in `options.notices`, every problem of the line.
struct RunLine {
  RunOptions options;
  bool help = false;  ///< -h/--help or --version was given: let CLI11 print them instead
};

/// Parses the words after `popdist run`. Never throws for a bad line: errors are notices.
[[nodiscard]] RunLine parse_run_line(const std::vector<std::string>& words);

/// The known option closest to the unknown `name` (a typo), or "" when none is close.
[[nodiscard]] std::string closest_option(const std::string& name, const std::vector<std::string>& known);

}  // namespace popdist::cli
