#pragma once
// popdist._core.FastPathFunction: a callable that skips the Python frame of its wrapped function
// when it is called without arguments (`popdist.synchronize()` is measured against mpi4py's
// `Barrier()`, where a Python-level wrapper alone costs about half of a one-rank Barrier()).

#include <pybind11/pybind11.h>

namespace popdist::python {

/// Adds the type `FastPathFunction(fast, general)` to `module`: calling an instance with no
/// arguments calls `fast()`, with any argument `general(*args, **kwargs)`. `fast` is writable
/// (to rebind it to an extension function once that is loaded). Instances carry a `__dict__`, so
/// `functools.update_wrapper(instance, general)` gives them general's name, docstring and, via
/// `__wrapped__`, its signature for inspect; they pickle by their module and qualified name.
void add_fast_path_function_type(pybind11::module_& module);

}  // namespace popdist::python
