#pragma once
// The mechanics of the process's life under Python, in popdist._core: start the MPI backend,
// finalize it, tell whether it runs. What Python adds around them (the one atexit callback, the
// excepthook that aborts the job, the interrupt watcher, torch.distributed's release) is decided
// by one owner, popdist._lifecycle (bindings/popdist/_lifecycle.py), which alone calls these; the
// C++ order they fit into is src/process/lifecycle.cpp's.

#include <pybind11/pybind11.h>

namespace popdist::python {

/// Adds start_backend, finalize, is_initialized and backend to `module`.
void add_lifecycle(pybind11::module_& module);

}  // namespace popdist::python
