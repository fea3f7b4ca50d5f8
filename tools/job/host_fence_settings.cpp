#include "job/host_fence_settings.hpp"

#include <charconv>
#include <stdexcept>

#include "job/run_limits.hpp"

namespace popdist::cli {
namespace {

/// A whole number in [0, max] from `variable`'s `text`, or an error naming both.
long long whole_number(const char* variable, const std::string& text, long long max, const char* expected) {
  long long value = -1;
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(text.data(), last, value);
  if (text.empty() || error != std::errc() || end != last || value < 0 || value > max)
    throw std::invalid_argument(std::string(variable) + "='" + text + "': expected " + expected);
  return value;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> fence_exports(double host_timeout, int grace_period) {
  const auto ms = static_cast<long long>(host_timeout * 1000);
  return {{kHostTimeoutVariable, std::to_string(ms)}, {kGracePeriodVariable, std::to_string(grace_period)}};
}

FenceSettings fence_settings(const EnvLookup& lookup) {
  FenceSettings settings;
  constexpr long long kLongestTimeoutMs = 1000LL * 3600 * 24 * 365;  // a year: far past any job's patience
  if (const auto timeout = lookup(kHostTimeoutVariable)) {
    settings.host_timeout = std::chrono::milliseconds(
        whole_number(kHostTimeoutVariable, *timeout, kLongestTimeoutMs, "milliseconds from 0 (never fence) to a year"));
  }
  if (const auto grace = lookup(kGracePeriodVariable)) {
    settings.grace = std::chrono::seconds(whole_number(kGracePeriodVariable, *grace, kMaxGracePeriod, "seconds from 0 to 3600"));
  }
  return settings;
}

}  // namespace popdist::cli
