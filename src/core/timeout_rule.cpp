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

std::optional<double> init_timeout_of(std::optional<double> sync_timeout) {
  if (!sync_timeout) return std::nullopt;
  return std::max(*sync_timeout, init_timeout_floor);
}

}  // namespace popdist
