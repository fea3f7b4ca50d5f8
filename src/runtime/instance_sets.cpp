#include "runtime/instance_sets.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "popdist/error.hpp"

namespace popdist::detail {

std::string format_set(const std::vector<int>& members) { return fmt::format("{{{}}}", fmt::join(members, ", ")); }

std::string format_set(const InstanceSet& members) { return fmt::format("{{{}}}", fmt::join(members, ", ")); }

std::vector<int> validated_members(const std::vector<int>& participants, int num_instances, const char* function) {
  if (participants.empty()) {
    throw UsageError(fmt::format("{}: the set of participants is empty; give at least one instance index in 0..{}",
                                 function, num_instances - 1));
  }
  std::vector<int> out_of_range;
  for (const auto member : participants) {
    if (member < 0 || member >= num_instances) out_of_range.push_back(member);
  }
  if (!out_of_range.empty()) {
    throw UsageError(fmt::format("{}: participant{} {} out of range: valid instance indices are 0..{} ({} instances)",
                                 function, out_of_range.size() == 1 ? "" : "s", fmt::join(out_of_range, ", "),
                                 num_instances - 1, num_instances));
  }
  auto sorted = participants;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> duplicates;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1] && (duplicates.empty() || duplicates.back() != sorted[i])) {
      duplicates.push_back(sorted[i]);
    }
  }
  if (!duplicates.empty()) {
    throw UsageError(fmt::format("{}: duplicate participant{} {} in [{}]: each instance may appear once", function,
                                 duplicates.size() == 1 ? "" : "s", fmt::join(duplicates, ", "),
                                 fmt::join(participants, ", ")));
  }
  return sorted;
}

std::vector<int> validated_members(const InstanceSet& participants, int num_instances, const char* function) {
  return validated_members(std::vector<int>(participants.begin(), participants.end()), num_instances, function);
}

std::uint64_t set_hash(const std::vector<int>& sorted_members) noexcept {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a offset basis
  for (const auto member : sorted_members) {
    auto value = static_cast<std::uint32_t>(member);
    for (int byte = 0; byte < 4; ++byte) {
      hash ^= value & 0xffU;
      hash *= 1099511628211ULL;  // FNV prime
      value >>= 8;
    }
  }
  return hash;
}

int timed_tag(std::uint64_t hash, TimedKind kind, int tag_ub) noexcept {
  const auto first = static_cast<std::uint64_t>(ControlTag::FirstSetTag);
  // Pairs of tags (arrived, gave up) per set; the standard guarantees tag_ub >= 32767.
  const auto pairs = (static_cast<std::uint64_t>(tag_ub) - first + 1) / 2;
  return static_cast<int>(first + (hash % pairs) * 2 + static_cast<std::uint64_t>(kind));
}

int creation_tag(std::uint64_t hash, int tag_ub) noexcept {
  return static_cast<int>(hash % (static_cast<std::uint64_t>(tag_ub) + 1));
}

std::optional<double> parse_sync_timeout(const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  const auto& text = *value;
  double seconds = 0;
  const auto* first = text.data();
  const auto* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(first, last, seconds);
  if (text.empty() || error != std::errc() || end != last || !std::isfinite(seconds) || seconds <= 0) {
    throw EnvironmentError(fmt::format("POPDIST_SYNC_TIMEOUT='{}' is not a timeout: expected a positive number of "
                                       "seconds such as 30 or 0.5",
                                       text));
  }
  return seconds;
}

void check_timeout_argument(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) {
    throw UsageError(fmt::format("synchronize: timeout={} seconds is not a timeout: expected a positive, finite "
                                 "number of seconds",
                                 seconds));
  }
}

}  // namespace popdist::detail
