#pragma once
// What `popdist run` has to say about a command line before the job starts: errors, warnings and
// the PopRun options it accepts but ignores, in command-line order, so that one run reports every
// problem of a line (a PopRun line then needs one edit, not one per offending option).

#include <cstdio>
#include <string>
#include <vector>

namespace popdist::cli {

/// One thing to tell the user about the command line.
struct Notice {
  enum class Kind {
    error,    ///< the job cannot start (exit 2)
    warning,  ///< printed once before the job starts
    ignored,  ///< a PopRun option without effect here; all of them share one warning line
  };
  Kind kind = Kind::error;
  std::string text;  ///< error/warning: the message; ignored: "--option 'value' (why)"
};

[[nodiscard]] bool has_errors(const std::vector<Notice>& notices);

/// The lines to print, in order: "error: ...", "warning: ...", and one "warning: ignored ..." line
/// (where the first ignored option was) naming every ignored option and why.
[[nodiscard]] std::vector<std::string> notice_lines(const std::vector<Notice>& notices);

/// Prints notice_lines() to `out`, each as "popdist run: <line>", in one write.
void print_notices(std::FILE* out, const std::vector<Notice>& notices);

}  // namespace popdist::cli
