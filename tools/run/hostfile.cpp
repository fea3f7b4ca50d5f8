#include "hostfile.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "popdist/error.hpp"

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
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string content = line.substr(0, line.find('#'));
    const auto words = words_of(content);
    if (words.empty()) continue;
    const std::string where = fmt::format("hostfile {} line {} '{}'", source, number, line);
    std::optional<int> slots;
    for (std::size_t i = 1; i < words.size(); ++i) {
      const std::string& word = words[i];
      const auto eq = word.find('=');
      const std::string key = word.substr(0, eq);
      if (eq == std::string::npos || (key != "slots" && key != "max_slots" && key != "count")) {
        throw UsageError(fmt::format("{}: unexpected '{}' (expected: host [slots=N] [max_slots=N])", where, word));
      }
      const std::string text = word.substr(eq + 1);
      int value = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 1) {
        throw UsageError(fmt::format("{}: '{}' must be a whole number >= 1", where, word));
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
  }
  if (hosts.empty()) throw UsageError(fmt::format("hostfile {} lists no hosts", source));
  return hosts;
}

std::vector<HostSpec> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--hostfile '{}': cannot open the file for reading", path));
  return parse_hostfile(in, path);
}

}  // namespace popdist::cli
