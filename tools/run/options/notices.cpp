#include "run/options/notices.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace popdist::cli {

bool has_errors(const std::vector<Notice>& notices) {
  return std::any_of(notices.begin(), notices.end(), [](const Notice& n) { return n.kind == Notice::Kind::error; });
}

std::vector<std::string> notice_lines(const std::vector<Notice>& notices) {
  std::vector<std::string> lines;
  std::string ignored;
  std::size_t ignored_line = 0;
  for (const Notice& notice : notices) {
    switch (notice.kind) {
      case Notice::Kind::error: lines.push_back("error: " + notice.text); break;
      case Notice::Kind::warning: lines.push_back("warning: " + notice.text); break;
      case Notice::Kind::ignored:
        if (ignored.empty()) {
          ignored_line = lines.size();
          lines.emplace_back();
        }
        ignored += (ignored.empty() ? "" : ", ") + notice.text;
        break;
    }
  }
  if (!ignored.empty()) {
    lines[ignored_line] = fmt::format(
        "warning: ignored PopRun options (popdist starts no V-IPU client; the job runs on whatever devices the hosts "
        "have): {}",
        ignored);
  }
  return lines;
}

void print_notices(std::FILE* out, const std::vector<Notice>& notices) {
  std::string text;
  for (const auto& line : notice_lines(notices)) text += "popdist run: " + line + "\n";
  std::fputs(text.c_str(), out);
  std::fflush(out);
}

}  // namespace popdist::cli
