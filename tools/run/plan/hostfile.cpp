#include "run/plan/hostfile.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "common/argument_text.hpp"
#include "job/run_limits.hpp"
#include "popdist/error.hpp"
#include "popdist/text_input.hpp"

namespace popdist::cli {
namespace {

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

std::vector<HostSpec> parse_hostfile(std::istream& in, const std::string& source) {
  std::vector<HostSpec> hosts;
  popdist::for_each_input_line(in, fmt::format("hostfile {}", source), [&](int number, std::string_view line) {
    const std::string content(line.substr(0, line.find('#')));
    const auto words = words_of(content);
    if (words.empty()) return;
    const std::string where = fmt::format("hostfile {} line {} {}", source, number, shown(line));
    std::optional<int> slots;
    for (std::size_t i = 1; i < words.size(); ++i) {
      const std::string& word = words[i];
      const auto eq = word.find('=');
      const std::string key = word.substr(0, eq);
      if (eq == std::string::npos || (key != "slots" && key != "max_slots" && key != "count")) {
        throw UsageError(fmt::format("{}: unexpected {} (expected: host [slots=N] [max_slots=N])", where, shown(word)));
      }
      const std::string text = word.substr(eq + 1);
      int value = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 1) {
        throw UsageError(fmt::format("{}: {} must be a whole number >= 1", where, shown(word)));
      }
      if (key != "max_slots") slots = value;
    }
    std::vector<std::string> names;
    try {
      names = expand_hostlist(words[0], "host");
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
    for (auto& name : names) hosts.push_back({std::move(name), slots});
    // Each line is bounded by expand_hostlist; many lines must not add up to millions of hosts.
    if (hosts.size() > static_cast<std::size_t>(kMaxHosts)) {
      throw UsageError(fmt::format("hostfile {} lists more than {} hosts (at line {}), the most popdist run uses",
                                   source, kMaxHosts, number));
    }
  });
  if (hosts.empty()) throw UsageError(fmt::format("hostfile {} lists no hosts", source));
  return hosts;
}

std::vector<HostSpec> read_hostfile(const std::string& path) {
  popdist::check_input_file(path, "--hostfile");
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--hostfile {}: cannot open the file for reading", shown(path)));
  return parse_hostfile(in, path);
}

}  // namespace popdist::cli
