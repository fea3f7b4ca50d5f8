#include "fast_path_function.hpp"

#include <structmember.h>

#include <cstddef>

// The vectorcall API under its public names (Python 3.9+) also on 3.8, where it was provisional.
#if PY_VERSION_HEX < 0x03090000
#define PyObject_Vectorcall _PyObject_Vectorcall
#define Py_TPFLAGS_HAVE_VECTORCALL _Py_TPFLAGS_HAVE_VECTORCALL
#endif

namespace py = pybind11;

namespace popdist::python {
namespace {

struct FastPathFunction {
  PyObject_HEAD
  vectorcallfunc vectorcall;  // the call protocol without an argument tuple: see call()
  PyObject* fast;             // called when there are no arguments
  PyObject* general;          // called with the arguments otherwise
  PyObject* dict;             // __dict__ (name, docstring, __wrapped__ from update_wrapper)
};

FastPathFunction* as_function(PyObject* self) { return reinterpret_cast<FastPathFunction*>(self); }

// The whole point of the type: no arguments -> fast(), without building a Python frame for
// general. Both targets are held by a new reference for the duration of the call, since a call
// may rebind `fast` (the first call loads the extension module that replaces it).
PyObject* call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* function = as_function(self);
  const bool no_arguments = PyVectorcall_NARGS(nargsf) == 0 && (kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0);
  PyObject* target = no_arguments ? function->fast : function->general;
  Py_INCREF(target);
  PyObject* result = no_arguments ? PyObject_Vectorcall(target, nullptr, 0, nullptr)
                                  : PyObject_Vectorcall(target, args, nargsf, kwnames);
  Py_DECREF(target);
  return result;
}

PyObject* create(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"fast", "general", nullptr};
  PyObject* fast = nullptr;
  PyObject* general = nullptr;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "OO:FastPathFunction", const_cast<char**>(keywords), &fast,
                                  &general) == 0) {
    return nullptr;
  }
  if (PyCallable_Check(fast) == 0 || PyCallable_Check(general) == 0) {
    PyErr_SetString(PyExc_TypeError, "FastPathFunction: fast and general must be callable");
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  auto* function = as_function(self);
  function->vectorcall = call;
  Py_INCREF(fast);
  function->fast = fast;
  Py_INCREF(general);
  function->general = general;
  return self;
}

int traverse(PyObject* self, visitproc visit, void* arg) {
  auto* function = as_function(self);
  Py_VISIT(function->fast);
  Py_VISIT(function->general);
  Py_VISIT(function->dict);
  return 0;
}

int clear(PyObject* self) {
  auto* function = as_function(self);
  Py_CLEAR(function->fast);
  Py_CLEAR(function->general);
  Py_CLEAR(function->dict);
  return 0;
}

void dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  clear(self);
  Py_TYPE(self)->tp_free(self);
}

// Rebinding `fast` to None or another non-callable would only fail later, at a call: refuse it.
int set_fast(PyObject* self, PyObject* value, void* /*closure*/) {
  if (value == nullptr || PyCallable_Check(value) == 0) {
    PyErr_SetString(PyExc_TypeError, "FastPathFunction.fast must be callable");
    return -1;
  }
  Py_INCREF(value);
  Py_SETREF(as_function(self)->fast, value);
  return 0;
}

PyObject* get_fast(PyObject* self, void* /*closure*/) {
  Py_INCREF(as_function(self)->fast);
  return as_function(self)->fast;
}

// Pickled by reference, like a function: the string names a global of the instance's __module__.
PyObject* reduce(PyObject* self, PyObject* /*unused*/) { return PyObject_GetAttrString(self, "__qualname__"); }

PyObject* repr(PyObject* self) { return PyObject_Repr(as_function(self)->general); }

PyMemberDef members[] = {
    {const_cast<char*>("general"), T_OBJECT_EX, offsetof(FastPathFunction, general), READONLY,
     const_cast<char*>("Called with the arguments when there are any.")},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef properties[] = {
    {const_cast<char*>("fast"), get_fast, set_fast, const_cast<char*>("Called when there are no arguments."), nullptr},
    {const_cast<char*>("__dict__"), PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef methods[] = {{"__reduce__", reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};

// CPython's idiom for a static type: the header initialized, every slot zero until filled in below.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
#pragma GCC diagnostic pop

}  // namespace

void add_fast_path_function_type(py::module_& module) {
  type.tp_name = "popdist._core.FastPathFunction";
  type.tp_doc = "FastPathFunction(fast, general): calls fast() without arguments, general(*args, **kwargs) with.";
  type.tp_basicsize = sizeof(FastPathFunction);
  type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  type.tp_vectorcall_offset = offsetof(FastPathFunction, vectorcall);
  type.tp_call = PyVectorcall_Call;
  type.tp_new = create;
  type.tp_dealloc = dealloc;
  type.tp_traverse = traverse;
  type.tp_clear = clear;
  type.tp_repr = repr;
  type.tp_members = members;
  type.tp_getset = properties;
  type.tp_methods = methods;
  type.tp_dictoffset = offsetof(FastPathFunction, dict);
  if (PyType_Ready(&type) != 0) throw py::error_already_set();
  Py_INCREF(&type);
  module.add_object("FastPathFunction", py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&type)));
}

}  // namespace popdist::python
