#include "protocols/instance_sets.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "popdist/arguments.hpp"

namespace popdist::detail {

namespace {

constexpr std::size_t kListedInFull = 16;  ///< members of a set written one by one
constexpr std::size_t kItemsShown = 16;    ///< items (members or runs) of a larger set

std::string format_sorted(const std::vector<int>& members) {
  if (members.size() <= kListedInFull) return fmt::format("{{{}}}", fmt::join(members, ", "));
  std::vector<std::string> items;
  for (std::size_t first = 0; first < members.size();) {
    auto last = first;
    while (last + 1 < members.size() && members[last + 1] == members[last] + 1) ++last;
    if (last - first >= 2) {
      items.push_back(fmt::format("{}-{}", members[first], members[last]));
    } else {
      for (auto one = first; one <= last; ++one) items.push_back(std::to_string(members[one]));
    }
    first = last + 1;
  }
  if (items.size() > kItemsShown) {
    items.erase(items.begin() + kItemsShown / 2, items.end() - kItemsShown / 2);
    items.insert(items.begin() + kItemsShown / 2, "...");
  }
  return fmt::format("{{{}}} ({} instances)", fmt::join(items, ", "), members.size());
}

}  // namespace

std::string format_set(const std::vector<int>& members) { return format_sorted(members); }

std::string format_set(const InstanceSet& members) { return format_sorted({members.begin(), members.end()}); }

std::vector<int> validated_members(const std::vector<int>& participants, int num_instances, const char* function) {
  return checked_instances(participants, num_instances, function);
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
  return parsed_timeout_variable(std::string_view(*value));
}

void check_timeout_argument(double seconds) { (void)checked_timeout(seconds, "synchronize"); }

}  // namespace popdist::detail
