#include "python_arguments.hpp"

#include <climits>
#include <limits>
#include <string>
#include <utility>

#include "popdist/arguments.hpp"
#include "popdist/error.hpp"

namespace py = pybind11;

namespace popdist::python {
namespace {

[[noreturn]] void fail(const char* caller, const std::string& problem) {
  throw UsageError(std::string(caller) + ": " + problem);
}

std::string repr_of(py::handle value) { return shown_repr(value); }

// An int too large for an index, for a message: its digits, or its size when they are many
// (str() of a huge int is slow, and refused beyond sys.int_info's digit limit).
std::string huge_integer(py::handle index) {
  const auto bits = index.attr("bit_length")().cast<long long>();
  if (bits <= 256) return py::str(index);
  return "of " + std::to_string(bits) + " bits";
}

// The value of an integer argument (exact int, numpy integer: anything with __index__), or
// std::nullopt when it does not fit a long long. Throws UsageError for a bool or a non-integer.
template <typename Complaint>
std::optional<long long> index_value(py::handle item, const Complaint& complaint, const char* caller,
                                     py::object* as_index) {
  // `complaint` makes the message only when needed: repr() of a long list costs its length.
  if (PyBool_Check(item.ptr()) || PyIndex_Check(item.ptr()) == 0) fail(caller, complaint());
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (as_index != nullptr) *as_index = index;
  if (overflow != 0) return std::nullopt;
  return value;
}

}  // namespace

std::string shown_repr(py::handle value) {
  try {
    return shown_text(std::string(py::repr(value)));
  } catch (py::error_already_set&) {
    // repr() may fail (a huge int beyond the digit limit, a broken __repr__): name the type.
    return "<" + std::string(py::str(py::type::handle_of(value).attr("__name__"))) + " object>";
  }
}

InstanceList instance_list(py::handle values, const char* caller, const char* argument, std::size_t limit) {
  const std::string name(argument);
  PyObject* iterator = PyUnicode_Check(values.ptr()) || PyBytes_Check(values.ptr()) ? nullptr
                                                                                    : PyObject_GetIter(values.ptr());
  if (iterator == nullptr) {
    PyErr_Clear();
    fail(caller, name + " must be an iterable of instance indices, got " + repr_of(values));
  }
  InstanceList list;
  const auto items = py::reinterpret_steal<py::object>(iterator);
  bool exhausted = true;
  for (py::handle item : items) {  // iterating an iterator yields its items
    if (list.values.size() == limit) {
      exhausted = false;  // more values than can be valid: the core reports, nothing more is read
      break;
    }
    // Any integer type (numpy's too) through __index__; a bool is an int in Python but never an
    // instance index a user meant.
    py::object index;
    const auto value = index_value(
        item,
        [&] {
          return name + " must hold integer instance indices, got " + repr_of(item) + " (item " +
                 std::to_string(list.values.size()) + ")";
        },
        caller, &index);
    if (!value || *value < INT_MIN || *value > INT_MAX) {
      // Too large for any job: the core's range check would see a wrapped value, so say it here.
      fail(caller, "participant " + huge_integer(index) + " out of range: not an instance index");
    }
    list.values.push_back(static_cast<int>(*value));
  }
  if (exhausted) {
    list.given = list.values.size();
  } else {
    const Py_ssize_t length = PyObject_Size(values.ptr());  // a list's or range's; -1 for an iterator
    if (length < 0) {
      PyErr_Clear();
    } else if (static_cast<std::size_t>(length) > list.values.size()) {
      list.given = static_cast<std::size_t>(length);
    }
  }
  return list;
}

std::vector<int> checked_instance_list(py::handle values, int num_instances, const char* caller,
                                       const char* argument, bool allow_empty) {
  const auto list = instance_list(values, caller, argument, instance_read_limit(num_instances));
  return checked_instances(list.values, num_instances, caller, allow_empty, list.given);
}

int integer_argument(py::handle value, const char* caller, const char* argument, int low, int high) {
  py::object index;
  const auto parsed =
      index_value(value, [&] { return std::string(argument) + " must be an integer, got " + repr_of(value); }, caller,
                  &index);
  if (parsed && *parsed < low && low != std::numeric_limits<int>::min()) {
    fail(caller, std::string(argument) + " must be >= " + std::to_string(low) + ", got " + std::to_string(*parsed));
  }
  if (!parsed || *parsed < low || *parsed > high) {
    const auto bits = index.attr("bit_length")().cast<long long>();
    const std::string shown =
        bits <= 256 ? std::string(py::str(index)) : "<an integer of " + std::to_string(bits) + " bits>";
    fail(caller, std::string(argument) + "=" + shown + " is out of range: expected an integer in " +
                     std::to_string(low) + ".." + std::to_string(high));
  }
  return static_cast<int>(*parsed);
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

namespace {

// The synchronize arguments by name, in order.
constexpr const char* kSynchronizeParameters[] = {"communicator_id", "participants", "timeout"};

}  // namespace

bool bind_synchronize_arguments(PyObject* const* arguments, Py_ssize_t count, PyObject* keywords,
                                PyObject* (&values)[3]) {
  if (count > 3) {
    PyErr_Format(PyExc_TypeError, "synchronize() takes from 0 to 3 positional arguments but %zd were given", count);
    return false;
  }
  for (Py_ssize_t i = 0; i < count; ++i) values[i] = arguments[i];
  const Py_ssize_t named = keywords != nullptr ? PyTuple_GET_SIZE(keywords) : 0;
  for (Py_ssize_t k = 0; k < named; ++k) {
    PyObject* name = PyTuple_GET_ITEM(keywords, k);
    int slot = 0;
    while (slot < 3 && PyUnicode_CompareWithASCIIString(name, kSynchronizeParameters[slot]) != 0) ++slot;
    if (slot == 3) {
      PyErr_Format(PyExc_TypeError, "synchronize() got an unexpected keyword argument '%U'", name);
      return false;
    }
    if (values[slot] != nullptr) {
      PyErr_Format(PyExc_TypeError, "synchronize() got multiple values for argument '%s'",
                   kSynchronizeParameters[slot]);
      return false;
    }
    values[slot] = arguments[count + k];
  }
  return true;
}

std::string communicator_id_of(PyObject* value) {
  if (PyUnicode_Check(value) == 0) {
    throw popdist::UsageError("communicator_id must be a str, got " + shown_repr(value));
  }
  Py_ssize_t length = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(value, &length);
  if (utf8 == nullptr) throw py::error_already_set();
  return std::string(utf8, static_cast<std::size_t>(length));
}

}  // namespace popdist::python
