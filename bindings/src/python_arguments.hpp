#pragma once
// Python arguments -> the C++ types of popdist/arguments.hpp. Conversion only: the rules (range,
// duplicates, timeout values) are the core's, checked under the Python API's name.

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

namespace popdist::python {

/// Any iterable of integers (list, set, range, generator, numpy integers) as a list, in the
/// order given, duplicates kept for the core to report. A str/bytes, a non-iterable, a bool or a
/// non-integer item throws UsageError "<caller>: <argument> must ...", naming the value.
[[nodiscard]] std::vector<int> instance_list(pybind11::handle values, const char* caller, const char* argument);

/// A timeout argument: None -> std::nullopt; an int or float -> the core's checked_timeout under
/// `caller`. Anything else (a bool, a str) throws UsageError naming it.
[[nodiscard]] std::optional<double> timeout_seconds(pybind11::handle timeout, const char* caller);

/// An error message with popdist's C++ function names replaced by the Python API's:
/// "register_communicator: x" -> "registerCommunicator: x".
[[nodiscard]] std::string python_message(const std::string& message);

}  // namespace popdist::python
