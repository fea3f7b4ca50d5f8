#pragma once
/// @file timeout_rule.hpp
/// The one timeout rule: what a timeout argument (C++ and Python) and POPDIST_SYNC_TIMEOUT may
/// say, and init()'s floor under it. The registry, the runtime, the Python bindings and a single
/// uninitialized Python process all check through these functions, so they cannot disagree.

#include <optional>
#include <string_view>

namespace popdist {

/// A timeout argument in seconds. The rule, the same in C++, Python and POPDIST_SYNC_TIMEOUT:
///   - a positive finite number: that many seconds;
///   - infinity: no limit (waits as long as it takes, even when POPDIST_SYNC_TIMEOUT is set);
///   - 0: an error. torch's c10d reads a zero timeout as "no timeout" and Python's standard
///     library as "do not wait"; either reading would surprise the other half of the users;
///   - negative or NaN: an error.
/// Returns `seconds` unchanged; throws UsageError "<caller>: timeout=<value> ..." otherwise.
double checked_timeout(double seconds, std::string_view caller);

/// POPDIST_SYNC_TIMEOUT's text under the same rule: std::nullopt when unset or "inf"/"infinity"
/// (no default timeout); a positive number of seconds ("30", "0.5", "1e-3"); anything else
/// (empty, "abc", "0", "-1", "nan", "2s") throws EnvironmentError naming the variable and value.
[[nodiscard]] std::optional<double> parsed_timeout_variable(const std::optional<std::string_view>& text);

/// Another variable that holds a delay, `name`'s text `text`: a positive finite number of seconds
/// ("30", "0.5"); anything else throws EnvironmentError naming the variable and value.
[[nodiscard]] double parsed_seconds_variable(std::string_view name, std::string_view text);

/// init()'s own steps are bounded by POPDIST_SYNC_TIMEOUT, but never by less than this many
/// seconds: MPI's start-up legitimately takes seconds on a loaded or oversubscribed machine and
/// the instances leave MPI_Init_thread that far apart, so a timeout chosen for synchronize (say
/// 0.5 s) must not end a healthy job while it starts.
inline constexpr double init_timeout_floor = 5.0;

/// The bound of init()'s steps for a POPDIST_SYNC_TIMEOUT of `sync_timeout` (std::nullopt: none):
/// at least init_timeout_floor.
[[nodiscard]] std::optional<double> init_timeout_of(std::optional<double> sync_timeout);

}  // namespace popdist
