// The argument rules of arguments.hpp. Pure: no MPI, so the Python package can check a single
// uninitialized process's calls without loading libmpi.

#include "popdist/arguments.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "popdist/error.hpp"

namespace popdist {

std::vector<int> checked_instances(const std::vector<int>& values, int num_instances, std::string_view caller,
                                   bool allow_empty) {
  if (values.empty()) {
    if (allow_empty) return {};
    throw UsageError(fmt::format("{}: the set of participants is empty; give at least one instance index in 0..{}",
                                 caller, num_instances - 1));
  }
  std::vector<int> out_of_range;
  for (const auto value : values) {
    if (value < 0 || value >= num_instances) out_of_range.push_back(value);
  }
  if (!out_of_range.empty()) {
    throw UsageError(fmt::format("{}: participant{} {} out of range: valid instance indices are 0..{} ({} instance{})",
                                 caller, out_of_range.size() == 1 ? "" : "s", fmt::join(out_of_range, ", "),
                                 num_instances - 1, num_instances, num_instances == 1 ? "" : "s"));
  }
  auto sorted = values;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> duplicates;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1] && (duplicates.empty() || duplicates.back() != sorted[i])) {
      duplicates.push_back(sorted[i]);
    }
  }
  if (!duplicates.empty()) {
    throw UsageError(fmt::format("{}: duplicate participant{} {} in [{}]: each instance may appear once", caller,
                                 duplicates.size() == 1 ? "" : "s", fmt::join(duplicates, ", "),
                                 fmt::join(values, ", ")));
  }
  return sorted;
}

double checked_timeout(double seconds, std::string_view caller) {
  if (std::isnan(seconds) || seconds < 0) {
    throw UsageError(fmt::format("{}: timeout={} seconds is not a timeout: expected a positive number of seconds, or "
                                 "infinity for no limit",
                                 caller, seconds));
  }
  if (seconds == 0) {
    // Refused rather than guessed: torch's c10d stores read 0 as "no timeout", Python's standard
    // library (queue, subprocess) as "do not wait".
    throw UsageError(fmt::format("{}: timeout=0 seconds is ambiguous (no limit? do not wait?): expected a positive "
                                 "number of seconds, or infinity for no limit",
                                 caller));
  }
  return seconds;
}

std::optional<double> parsed_timeout_variable(const std::optional<std::string_view>& text) {
  if (!text) return std::nullopt;
  const auto fail = [&]() -> std::optional<double> {
    throw EnvironmentError(fmt::format("POPDIST_SYNC_TIMEOUT='{}' is not a timeout: expected a positive number of "
                                       "seconds such as 30 or 0.5, or inf for no default timeout",
                                       *text));
  };
  if (*text == "inf" || *text == "infinity") return std::nullopt;
  double seconds = 0;
  const auto* first = text->data();
  const auto* last = text->data() + text->size();
  const auto [end, error] = std::from_chars(first, last, seconds);
  // from_chars also reads "inf" and "nan" in other spellings ("INF", "nan(...)"): only the two
  // exact words above mean "no limit"; everything non-finite besides them is refused.
  if (text->empty() || error != std::errc() || end != last || !std::isfinite(seconds) || seconds <= 0) return fail();
  return seconds;
}

}  // namespace popdist
