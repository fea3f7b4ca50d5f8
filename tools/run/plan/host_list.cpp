#include "run/plan/host_list.hpp"

#include <fmt/format.h>

#include <charconv>
#include <set>

#include "common/argument_text.hpp"
#include "job/run_limits.hpp"
#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

// Every expansion is counted before it is made, so `n[0-999999999]` or `a[0-99999]b[0-99999]`
// fails at once instead of eating the memory.
constexpr auto kMaxNames = static_cast<std::size_t>(kMaxHosts);
// DNS limits a name to 255 characters; longer is a mistake (and would be copied per host).
constexpr std::size_t kMaxNameLength = 255;

[[noreturn]] void fail(std::string_view what, std::string_view value, const std::string& problem) {
  throw UsageError(fmt::format("{} {}: {}", what, shown(value), problem));
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_';
}

// Splits on commas that are not inside brackets; brackets must balance and not nest.
std::vector<std::string_view> split_top_level(std::string_view value, std::string_view what) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '[') {
      if (depth > 0) fail(what, value, fmt::format("nested '[' at position {}", i));
      depth = 1;
    } else if (c == ']') {
      if (depth == 0) fail(what, value, fmt::format("']' without '[' at position {}", i));
      depth = 0;
    } else if (c == ',' && depth == 0) {
      items.push_back(value.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) fail(what, value, "'[' without a closing ']'");
  items.push_back(value.substr(start));
  return items;
}

// A bound inside brackets: plain decimal digits.
long parse_bound(std::string_view text, std::string_view what, std::string_view value) {
  long number = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (text.empty() || ec != std::errc() || ptr != end) {
    fail(what, value, fmt::format("'{}' in brackets is not a decimal number (expected e.g. node[0-3,7])", text));
  }
  return number;
}

// The expansions of one bracket group's content, e.g. "01-03,7" -> 01 02 03 7.
std::vector<std::string> expand_range_list(std::string_view content, std::string_view what, std::string_view value) {
  if (content.empty()) fail(what, value, "empty brackets '[]'");
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= content.size()) {
    std::size_t comma = content.find(',', start);
    if (comma == std::string_view::npos) comma = content.size();
    const std::string_view range = content.substr(start, comma - start);
    const std::size_t dash = range.find('-');
    const std::string_view low_text = range.substr(0, dash);
    const std::string_view high_text = dash == std::string_view::npos ? low_text : range.substr(dash + 1);
    const long low = parse_bound(low_text, what, value);
    const long high = parse_bound(high_text, what, value);
    if (high < low) fail(what, value, fmt::format("range '{}' runs backwards", range));
    if (static_cast<std::size_t>(high - low) >= kMaxNames - out.size()) {
      fail(what, value, fmt::format("range '{}' makes the brackets name more than {} hosts (the most popdist run "
                                    "plans for)",
                                    range, kMaxNames));
    }
    // Slurm keeps the zero padding of the lower bound: n[01-10] -> n01 ... n10.
    const std::size_t width = low_text.size();
    for (long n = low; n <= high; ++n) out.push_back(fmt::format("{:0{}}", n, width));
    start = comma + 1;
  }
  return out;
}

// Expands one item (no top-level commas): literal text and bracket groups, leftmost slowest.
std::vector<std::string> expand_item(std::string_view item, std::string_view what, std::string_view value) {
  if (item.empty()) fail(what, value, "empty host name (check for ',,' or a trailing ',')");
  std::vector<std::string> names{""};
  std::size_t i = 0;
  while (i < item.size()) {
    if (item[i] == '[') {
      const std::size_t close = item.find(']', i);  // balanced: split_top_level checked
      const auto choices = expand_range_list(item.substr(i + 1, close - i - 1), what, value);
      // Both factors are at most kMaxNames, so the product cannot overflow a size_t.
      if (names.size() * choices.size() > kMaxNames) {
        fail(what, value, fmt::format("names {} x {} = {} hosts: more than {}, the most popdist run plans for", names.size(),
                                      choices.size(), names.size() * choices.size(), kMaxNames));
      }
      std::vector<std::string> next;
      next.reserve(names.size() * choices.size());
      for (const auto& prefix : names) {
        for (const auto& choice : choices) next.push_back(prefix + choice);
      }
      names = std::move(next);
      i = close + 1;
      if (names.front().size() > kMaxNameLength) {
        fail(what, value, fmt::format("a host name longer than {} characters", kMaxNameLength));
      }
    } else {
      if (!is_name_char(item[i])) {
        fail(what, value,
             fmt::format("'{}' is not allowed in a host name (letters, digits, '-', '.', '_' and [ranges])", item[i]));
      }
      if (names.front().size() >= kMaxNameLength) {
        fail(what, value, fmt::format("a host name longer than {} characters", kMaxNameLength));
      }
      for (auto& name : names) name += item[i];
      ++i;
    }
  }
  return names;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view value, std::string_view what) {
  std::vector<std::string> hosts;
  for (const auto item : split_top_level(value, what)) {
    auto names = expand_item(item, what, value);
    hosts.insert(hosts.end(), names.begin(), names.end());
    if (hosts.size() > kMaxNames) fail(what, value, fmt::format("names more than {} hosts (the most popdist run plans for)", kMaxNames));
  }
  return hosts;
}

std::vector<HostSpec> parse_host_list(std::string_view value, std::string_view what) {
  std::vector<HostSpec> hosts;
  for (const auto item : split_top_level(value, what)) {
    std::string_view names_part = item;
    std::optional<int> slots;
    if (const auto colon = item.rfind(':'); colon != std::string_view::npos) {
      names_part = item.substr(0, colon);
      const std::string_view slots_text = item.substr(colon + 1);
      int number = 0;
      const auto* end = slots_text.data() + slots_text.size();
      const auto [ptr, ec] = std::from_chars(slots_text.data(), end, number);
      if (slots_text.empty() || ec != std::errc() || ptr != end || number < 1) {
        fail(what, value, fmt::format("slots '{}' in '{}' must be a whole number >= 1 (host:slots)", slots_text, item));
      }
      slots = number;
    }
    for (auto& name : expand_item(names_part, what, value)) hosts.push_back({std::move(name), slots});
    if (hosts.size() > kMaxNames) fail(what, value, fmt::format("names more than {} hosts (the most popdist run plans for)", kMaxNames));
  }
  return hosts;
}

void check_unique_hosts(const std::vector<HostSpec>& hosts, std::string_view what) {
  std::set<std::string_view> seen;
  for (const auto& host : hosts) {
    if (!seen.insert(host.name).second) {
      throw UsageError(fmt::format("{}: host '{}' is listed more than once; list each host once (instances are "
                                   "divided evenly among the hosts)",
                                   what, host.name));
    }
  }
}

}  // namespace popdist::cli
