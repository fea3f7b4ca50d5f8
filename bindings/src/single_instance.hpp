#pragma once
// The registry's calls in a job of one instance before init() (or after finalize()): they do what
// they would do in that job -- synchronize returns, execute_on_instances runs the function --
// without MPI, so that the PopDist pattern `if isPopdistEnvSet(): init()` followed by
// unconditional calls works in a plain single process (design.md §4). The same argument checks as
// under MPI (popdist/arguments.hpp); ids used here all name the one set {0}.

#include <pybind11/pybind11.h>

#include <string>

namespace popdist::python {

/// True when the calls below apply: popdist._mpi is not initialized and the job has one instance.
[[nodiscard]] bool single_uninitialized();

/// registerCommunicator(participants, communicator_id) in a job of one instance.
void register_locally(pybind11::handle participants, const std::string& communicator_id);

/// synchronize(communicator_id, participants, timeout) in a job of one instance (nullptr: not given).
void synchronize_locally(pybind11::handle communicator_id, const std::string& name, PyObject* participants,
                         PyObject* timeout);

/// execute_on_instances(instances, func, *args, **kwargs) in a job of one instance: func's result.
[[nodiscard]] pybind11::object execute_locally(pybind11::handle instances, pybind11::handle func,
                                               pybind11::handle args, pybind11::handle kwargs);

}  // namespace popdist::python
