#include "run/report/slurm_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace popdist::cli {
namespace {

std::string upper(std::string word) {
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::toupper(c); });
  return word;
}

bool starts_with(const std::string& word, const char* prefix) { return word.rfind(prefix, 0) == 0; }

}  // namespace

std::vector<SlurmNode> parse_slurm_nodes(const std::string& sinfo_output) {
  std::vector<SlurmNode> nodes;
  std::istringstream lines(sinfo_output);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find('|');
    const auto second = first == std::string::npos ? first : line.find('|', first + 1);
    if (second == std::string::npos || first == 0) continue;
    SlurmNode node{line.substr(0, first), line.substr(first + 1, second - first - 1), line.substr(second + 1)};
    while (!node.reason.empty() && std::isspace(static_cast<unsigned char>(node.reason.back())) != 0) {
      node.reason.pop_back();
    }
    if (node.reason == "none") node.reason.clear();
    const auto same = [&node](const SlurmNode& other) { return other.name == node.name; };
    const bool listed = std::any_of(nodes.begin(), nodes.end(), same);
    if (!listed) nodes.push_back(std::move(node));
  }
  return nodes;
}

bool out_of_service(const SlurmNode& node) {
  const auto& state = node.state;
  return starts_with(state, "down") || starts_with(state, "fail") || starts_with(state, "drain") ||
         (!state.empty() && state.back() == '*');
}

std::string slurm_nodes_report(const std::vector<SlurmNode>& nodes) {
  std::string text;
  for (const auto& node : nodes) {
    if (!out_of_service(node)) continue;
    auto state = node.state;
    const bool silent = !state.empty() && state.back() == '*';
    if (silent) state.pop_back();
    text += fmt::format("  Slurm took node {} out of service: {}{}{} (sinfo; Slurm ended the job's step there)\n",
                        node.name, upper(state), silent ? ", not responding" : "",
                        node.reason.empty() ? "" : fmt::format(", reason \"{}\"", node.reason));
  }
  return text;
}

}  // namespace popdist::cli
