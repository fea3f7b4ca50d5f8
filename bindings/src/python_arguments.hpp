#pragma once
// Python arguments -> the C++ types of popdist/arguments.hpp. Conversion only: the rules (range,
// duplicates, timeout values) are the core's, checked under the Python API's name.

#include <pybind11/pybind11.h>

#include "popdist/caller.hpp"
#include "shared_core.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace popdist::python {

/// The first values of a list of instance indices, and how many values it holds.
struct InstanceList {
  std::vector<int> values;           ///< at most the `limit` given to instance_list
  std::optional<std::size_t> given;  ///< the list's length; std::nullopt: unknown, more than values
};

/// Any iterable of integers (list, set, range, generator, numpy integers), in the order given,
/// duplicates kept for the core to report; at most `limit` values are read (the core's
/// instance_read_limit), so range(10**18) or itertools.repeat(0) costs no more than a short
/// list. A str/bytes, a non-iterable, a bool or a non-integer item throws UsageError
/// "<caller>: <argument> must ...", naming the value (shortened).
[[nodiscard]] POPDIST_PYTHON_API InstanceList instance_list(pybind11::handle values, const char* caller,
                                                            const char* argument, std::size_t limit);

/// instance_list, then the core's checked_instances over `num_instances`: the sorted members.
[[nodiscard]] POPDIST_PYTHON_API std::vector<int> checked_instance_list(pybind11::handle values, int num_instances,
                                                                       const char* caller, const char* argument,
                                                                       bool allow_empty);

/// repr(value) for an error message, shortened as the core's shown_text does.
[[nodiscard]] POPDIST_PYTHON_API std::string shown_repr(pybind11::handle value);

/// An integer argument of a PopDist call (a count, an index): an int or anything with
/// __index__ (numpy integers), in [low, high]. A bool, a float, a str or a value out of range
/// throws UsageError "<caller>: <argument>=<value> ..." ("<argument> must be >= <low>" below a
/// bound other than INT_MIN): never pybind11's signature dump. The one integer rule of the
/// Python API: the Python files pass integers on unconverted.
[[nodiscard]] POPDIST_PYTHON_API int integer_argument(pybind11::handle value, const char* caller,
                                                      const char* argument, int low, int high);

/// A timeout argument: None -> std::nullopt; an int or float -> the core's checked_timeout under
/// `caller`. Anything else (a bool, a str) throws UsageError naming it.
[[nodiscard]] POPDIST_PYTHON_API std::optional<double> timeout_seconds(pybind11::handle timeout, const char* caller);

/// Matches the positional and keyword arguments of a METH_FASTCALL | METH_KEYWORDS call to
/// synchronize's three parameters (communicator_id, participants, timeout; nullptr: not given),
/// raising TypeError as Python does for a function with that signature (returns false then).
[[nodiscard]] bool bind_synchronize_arguments(PyObject* const* arguments, Py_ssize_t count, PyObject* keywords,
                                              PyObject* (&values)[3]);

/// The communicator id from Python: a str (or a subclass), else UsageError naming it.
[[nodiscard]] std::string communicator_id_of(PyObject* value);

/// A call of the Python API, for the core's errors: they name `name` and, in advice and in the
/// handshake's errors, registerCommunicator (popdist/caller.hpp).
[[nodiscard]] constexpr popdist::detail::Caller python_call(const char* name) noexcept {
  return {name, "registerCommunicator"};
}

}  // namespace popdist::python
