#include "python_arguments.hpp"

#include <climits>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "popdist/arguments.hpp"
#include "popdist/error.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

[[noreturn]] void fail(const char* caller, const std::string& problem) {
  throw UsageError(std::string(caller) + ": " + problem);
}

std::string repr_of(py::handle value) { return py::repr(value); }

}  // namespace

std::vector<int> instance_list(py::handle values, const char* caller, const char* argument) {
  const std::string name(argument);
  PyObject* iterator = PyUnicode_Check(values.ptr()) || PyBytes_Check(values.ptr()) ? nullptr
                                                                                    : PyObject_GetIter(values.ptr());
  if (iterator == nullptr) {
    PyErr_Clear();
    fail(caller, name + " must be an iterable of instance indices, got " + repr_of(values));
  }
  std::vector<int> members;
  const auto items = py::reinterpret_steal<py::object>(iterator);
  for (py::handle item : items) {  // iterating an iterator yields its items
    // Any integer type (numpy's too) through __index__; a bool is an int in Python but never an
    // instance index a user meant.
    if (PyBool_Check(item.ptr()) || PyIndex_Check(item.ptr()) == 0) {
      fail(caller, name + " must hold integer instance indices, got " + repr_of(item) + " in " + repr_of(values));
    }
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
    if (!index) throw py::error_already_set();
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0 || value < INT_MIN || value > INT_MAX) {
      // Too large for any job: the core's range check would see a wrapped value, so say it here.
      fail(caller, "participant " + std::string(py::str(index)) + " out of range: not an instance index");
    }
    members.push_back(static_cast<int>(value));
  }
  return members;
}

std::optional<double> timeout_seconds(py::handle timeout, const char* caller) {
  if (timeout.is_none()) return std::nullopt;
  if (PyBool_Check(timeout.ptr()) || (PyLong_Check(timeout.ptr()) == 0 && PyFloat_Check(timeout.ptr()) == 0)) {
    fail(caller, "timeout must be a number of seconds or None, got " + repr_of(timeout));
  }
  double seconds = PyFloat_AsDouble(timeout.ptr());
  if (seconds == -1.0 && PyErr_Occurred() != nullptr) {
    // An int beyond a double's range: as far from zero as a double goes, with its sign.
    PyErr_Clear();
    const bool negative = PyObject_RichCompareBool(timeout.ptr(), py::int_(0).ptr(), Py_LT) == 1;
    seconds = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return checked_timeout(seconds, caller);
}

std::string python_message(const std::string& message) {
  // The C++ functions whose names differ from the Python API's (DESIGN.md 4), wherever the
  // message names them (as its subject, or in advice such as "register it first with ...").
  static const std::pair<std::string_view, std::string_view> renamed[] = {
      {"register_grouping_communicators", "registerGroupingCommunicators"},
      {"register_communicator", "registerCommunicator"},
      {"native_communicator:", "comm:"},
  };
  std::string text = message;
  for (const auto& [cpp, python] : renamed) {
    for (auto at = text.find(cpp); at != std::string::npos; at = text.find(cpp, at + python.size())) {
      text.replace(at, cpp.size(), python);
    }
  }
  return text;
}

}  // namespace popdist::python
