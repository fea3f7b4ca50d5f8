#pragma once
// The process lifecycle under Python, owned here, in popdist._core, and nowhere else (after
// mpi4py's: one module starts MPI, decides the exit policy and finalizes):
//   - init(): imports popdist._mpi (libmpi is loaded there, never by `import popdist`), starts
//     the runtime, adopts its refined topology (current_topology.hpp);
//   - exit: ONE Python atexit callback, registered by the first init() or at_exit(): the
//     teardowns registered with at_exit() (popdist.torch's), newest first, then finalize() when
//     mpi4py or the host program started MPI (before mpi4py's own atexit finalizes it: atexit is
//     LIFO). When init() started MPI, the C++ runtime's on_exit handler (src/runtime/runtime.cpp)
//     finalizes after the interpreter has exited, because only there is the exit status known:
//     a failing status aborts the job instead of waiting in MPI_Finalize;
//   - uncaught exceptions: when init() started MPI, sys.excepthook is chained to arm the job's
//     abort (like `python -m mpi4py`), which runs from the first atexit callback once every hook
//     has written its traceback, or from a daemon timer when the interpreter does not get there.

#include <pybind11/pybind11.h>

namespace popdist::python {

/// Seconds between an uncaught exception and the job's abort when the interpreter does not reach
/// atexit by itself (a non-daemon thread still running, e.g. blocked in a collective).
inline constexpr double kAbortFallbackSeconds = 5.0;

/// Adds init, finalize, is_initialized, at_exit and backend to `module`.
void add_lifecycle(pybind11::module_& module);

}  // namespace popdist::python
