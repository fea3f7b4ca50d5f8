// The instance-set rules of arguments.hpp. Pure: no MPI, so the Python package can check a single
// uninitialized process's calls without loading libmpi.

#include "popdist/arguments.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string>

#include "popdist/error.hpp"

namespace popdist {

namespace {

// At most this many offending values are named in a message, then "...".
constexpr std::size_t kShownValues = 5;
// At most this many values of the caller's list are quoted (duplicates' context).
constexpr std::size_t kQuotedValues = 8;
constexpr std::size_t kShownChars = 64;

// 1000000 -> "1,000,000": counts of a hostile size read better grouped.
std::string grouped(std::size_t count) {
  auto digits = std::to_string(count);
  for (auto at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, ",");
  return digits;
}

// "2, 3, 4, 5, 6, ..." : the first kShownValues of `values`, and "..." when there are more.
std::string first_few(const std::vector<int>& values, std::size_t limit = kShownValues) {
  const auto shown = std::min(values.size(), limit);
  auto text = fmt::format("{}", fmt::join(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
  if (values.size() > shown) text += ", ...";
  return text;
}

std::string plural(std::size_t count, std::string_view word) {
  return fmt::format("{}{}", word, count == 1 ? "" : "s");
}

// The values that are out of range, and those that appear more than once (each once, sorted).
struct Offenders {
  std::vector<int> out_of_range;
  std::vector<int> duplicates;
};

Offenders offenders_in(const std::vector<int>& values, int num_instances) {
  Offenders found;
  std::set<int> seen;  // each offending value named once, in the order given
  for (const auto value : values) {
    if ((value < 0 || value >= num_instances) && seen.insert(value).second) found.out_of_range.push_back(value);
  }
  auto sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1] && (found.duplicates.empty() || found.duplicates.back() != sorted[i])) {
      found.duplicates.push_back(sorted[i]);
    }
  }
  return found;
}

[[noreturn]] void fail_too_many(const std::vector<int>& read, int num_instances, std::string_view caller,
                                std::optional<std::size_t> given) {
  const auto found = offenders_in(read, num_instances);
  std::string among;
  if (!found.out_of_range.empty()) among += fmt::format("; out of range: {}", first_few(found.out_of_range));
  if (!found.duplicates.empty()) among += fmt::format("; repeated: {}", first_few(found.duplicates));
  throw UsageError(fmt::format("{}: {} participants for a job of {} {}: at most {} can be valid, each instance once "
                               "(valid instance indices are 0..{}){}",
                               caller, given ? grouped(*given) : "more than " + grouped(read.size()), num_instances,
                               plural(static_cast<std::size_t>(num_instances), "instance"), num_instances,
                               num_instances - 1, among));
}

}  // namespace

std::size_t instance_read_limit(int num_instances) {
  return static_cast<std::size_t>(std::max(num_instances, 0)) + kShownValues;
}

std::vector<int> checked_instances(const std::vector<int>& values, int num_instances, std::string_view caller,
                                   bool allow_empty, std::optional<std::size_t> given) {
  if (!given || *given > values.size()) fail_too_many(values, num_instances, caller, given);
  return checked_instances(values, num_instances, caller, allow_empty);
}

std::vector<int> checked_instances(const std::vector<int>& values, int num_instances, std::string_view caller,
                                   bool allow_empty) {
  if (values.empty()) {
    if (allow_empty) return {};
    throw UsageError(fmt::format("{}: the set of participants is empty; give at least one instance index in 0..{}",
                                 caller, num_instances - 1));
  }
  const auto found = offenders_in(values, num_instances);
  // "(999,999 of 1,000,000 participants)" only when the list shown is cut.
  const auto of_total = [&](const std::vector<int>& offending) {
    return offending.size() > kShownValues
               ? fmt::format(" ({} of {} participants)", grouped(offending.size()), grouped(values.size()))
               : std::string();
  };
  if (!found.out_of_range.empty()) {
    throw UsageError(fmt::format("{}: {} {} out of range{}: valid instance indices are 0..{} ({} {})", caller,
                                 plural(found.out_of_range.size(), "participant"), first_few(found.out_of_range),
                                 of_total(found.out_of_range), num_instances - 1, num_instances,
                                 plural(static_cast<std::size_t>(num_instances), "instance")));
  }
  if (!found.duplicates.empty()) {
    const auto count = values.size() > kQuotedValues ? fmt::format(" ({} participants)", grouped(values.size()))
                                                     : std::string();
    throw UsageError(fmt::format("{}: duplicate {} {} in [{}]{}: each instance may appear once", caller,
                                 plural(found.duplicates.size(), "participant"), first_few(found.duplicates),
                                 first_few(values, kQuotedValues), count));
  }
  auto sorted = values;
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

std::string shown_text(std::string_view value) {
  if (value.size() <= kShownChars) return std::string(value);
  // Cut on a character boundary: half a UTF-8 sequence would make the message undecodable.
  auto cut = kShownChars;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... ({} bytes)", value.substr(0, cut), grouped(value.size()));
}

}  // namespace popdist
