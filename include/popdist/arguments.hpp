#pragma once
/// @file arguments.hpp
/// The one rule for the arguments of registerCommunicator, synchronize, execute_on_instances and
/// comm: instance sets and timeouts. C++ (the registry), the Python bindings and a single
/// uninitialized Python process all check through these functions, so the languages cannot
/// disagree. Each takes the caller's own API name, which starts every error message: C++ callers
/// pass "register_communicator", Python's bindings "registerCommunicator".

#include <optional>
#include <string_view>
#include <vector>

namespace popdist {

/// The instance indices `values` lists, sorted. Every value must be in 0..num_instances-1 and
/// appear once; an empty list is an error unless `allow_empty` (synchronize's "by id" or "the
/// current scope"). Throws UsageError "<caller>: ..." naming the offending values and the
/// valid range.
[[nodiscard]] std::vector<int> checked_instances(const std::vector<int>& values, int num_instances,
                                                 std::string_view caller, bool allow_empty = false);

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

}  // namespace popdist
