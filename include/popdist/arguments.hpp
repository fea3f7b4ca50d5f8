#pragma once
/// @file arguments.hpp
/// The one rule for the arguments of registerCommunicator, synchronize, execute_on_instances and
/// comm: instance sets here, timeouts in timeout_rule.hpp (included). C++ (the registry), the
/// Python bindings and a single uninitialized Python process all check through these functions,
/// so the languages cannot disagree. Each takes the caller's own API name, which starts every error message: C++ callers
/// pass "register_communicator", Python's bindings "registerCommunicator".

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "popdist/timeout_rule.hpp"

namespace popdist {

/// The instance indices `values` lists, sorted. Every value must be in 0..num_instances-1 and
/// appear once; an empty list is an error unless `allow_empty` (synchronize's "by id" or "the
/// current scope"). Throws UsageError "<caller>: ..." naming the offending values and the
/// valid range.
[[nodiscard]] std::vector<int> checked_instances(const std::vector<int>& values, int num_instances,
                                                 std::string_view caller, bool allow_empty = false);

/// How many values of a list of instance indices a caller needs to read: at most `num_instances`
/// distinct values can be valid, so a longer list is wrong whatever follows; a few more are read
/// so that the error can show the first offending values. Bounds the work and memory of a
/// hostile argument (range(10**18), itertools.repeat(0)) to O(instances).
[[nodiscard]] std::size_t instance_read_limit(int num_instances);

/// checked_instances over the first values of a longer list: `values` are the first values.size()
/// of `given` values (std::nullopt: a list of unknown length, longer than values.size()). When the
/// list was cut short (more than num_instances values) it is an error naming the count, the
/// bound and the first offending values; otherwise exactly checked_instances(values, ...).
[[nodiscard]] std::vector<int> checked_instances(const std::vector<int>& values, int num_instances,
                                                 std::string_view caller, bool allow_empty,
                                                 std::optional<std::size_t> given);

/// A value for an error message, shortened: its first 64 characters, then "... (N bytes)" when
/// it is longer, so that a 1 MB argument never becomes a 1 MB message.
[[nodiscard]] std::string shown_text(std::string_view value);

}  // namespace popdist
