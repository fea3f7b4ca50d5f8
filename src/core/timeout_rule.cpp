// The timeout rule of timeout_rule.hpp. Pure: no MPI.

#include "popdist/timeout_rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "popdist/error.hpp"

namespace popdist {

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

namespace {

/// A positive finite number of seconds, or nothing. from_chars also reads "inf" and "nan" in
/// other spellings ("INF", "nan(...)"): everything non-finite is refused here.
std::optional<double> positive_seconds(std::string_view text) {
  double seconds = 0;
  const auto* first = text.data();
  const auto* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(first, last, seconds);
  if (text.empty() || error != std::errc() || end != last || !std::isfinite(seconds) || seconds <= 0) return std::nullopt;
  return seconds;
}

}  // namespace

std::optional<double> parsed_timeout_variable(const std::optional<std::string_view>& text) {
  if (!text) return std::nullopt;
  if (*text == "inf" || *text == "infinity") return std::nullopt;  // only these two words mean "no limit"
  if (const auto seconds = positive_seconds(*text)) return seconds;
  throw EnvironmentError(fmt::format("POPDIST_SYNC_TIMEOUT='{}' is not a timeout: expected a positive number of "
                                     "seconds such as 30 or 0.5, or inf for no default timeout",
                                     *text));
}

double parsed_seconds_variable(std::string_view name, std::string_view text) {
  if (const auto seconds = positive_seconds(text)) return *seconds;
  throw EnvironmentError(
      fmt::format("{}='{}' is not a delay: expected a positive number of seconds such as 30 or 0.5", name, text));
}

std::optional<double> init_timeout_of(std::optional<double> sync_timeout) {
  if (!sync_timeout) return std::nullopt;
  return std::max(*sync_timeout, init_timeout_floor);
}

}  // namespace popdist
