// Small collectives over the current scope for the framework helpers (popdist.torch,
// popdist.lightning): instance 0 broadcasting a rendezvous address, every instance gathering a
// seed. Bytes in, bytes out, so the Python side decides the encoding and no MPI datatype leaks
// into Python. Registered into popdist._mpi by register_collectives().
//
// Both are collectives over the communicator popdist owns for the current scope (all instances,
// or the set of the enclosing execute_on_instances); they need init(). The GIL is released while
// MPI waits, as for every blocking call of popdist._mpi.

#include <mpi.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include "popdist/error.hpp"
#include "popdist/registry.hpp"
#include "python_arguments.hpp"

namespace py = pybind11;

namespace {

void check_mpi(int code, const char* function) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw popdist::MpiError(function, code, std::string(text, static_cast<std::size_t>(length)));
}

MPI_Comm scope_communicator(const char* caller) {
  MPI_Comm comm = popdist::native_communicator();
  if (comm == MPI_COMM_NULL) {
    throw popdist::UsageError(std::string(caller) + ": this instance is not a member of the current scope");
  }
  return comm;
}

int checked_length(std::size_t size, const char* caller) {
  if (size > static_cast<std::size_t>(INT_MAX)) {
    throw popdist::UsageError(std::string(caller) + ": data of " + std::to_string(size) +
                              " bytes is larger than the limit of " + std::to_string(INT_MAX) + " bytes");
  }
  return static_cast<int>(size);
}

// Nobody waits for an instance that left: with a timeout, the members first meet in a timed
// synchronize over the scope, so an instance that exited (cleanly or not), failed before the
// call or is late makes the others fail within the bound with a TimeoutError naming it, instead
// of waiting in the collective forever. Once everyone has arrived the collective itself is
// immediate. `caller` is the popdist.torch/lightning call the user made.
void meet_within(const std::optional<double>& timeout, const std::string& caller) {
  if (!timeout) return;
  try {
    popdist::synchronize("", {}, popdist::Seconds(*timeout));
  } catch (const popdist::TimeoutError& e) {
    std::ostringstream message;
    message << caller << ": every instance must take part, but not all did within " << *timeout
            << " s (an instance that exited, failed or is late): " << e.what();
    throw popdist::TimeoutError(message.str(), e.missing_instances());
  }
}

// The root's bytes on every member. Non-roots pass anything (ignored). Two broadcasts: the
// length first, so that non-roots need not know it in advance.
py::bytes broadcast_bytes(const std::string& data, int root, const py::handle& timeout, const std::string& caller) {
  const auto seconds = popdist::python::timeout_seconds(timeout, caller.c_str());
  std::string buffer;
  {
    py::gil_scoped_release release;
    meet_within(seconds, caller);
    MPI_Comm comm = scope_communicator("broadcast_bytes");
    int size = 0;
    int rank = 0;
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    if (root < 0 || root >= size) {
      throw popdist::UsageError("broadcast_bytes: root " + std::to_string(root) + " is not in 0.." +
                                std::to_string(size - 1));
    }
    int length = rank == root ? checked_length(data.size(), "broadcast_bytes") : 0;
    check_mpi(MPI_Bcast(&length, 1, MPI_INT, root, comm), "MPI_Bcast");
    buffer = rank == root ? data : std::string(static_cast<std::size_t>(length), '\0');
    if (length > 0) check_mpi(MPI_Bcast(buffer.data(), length, MPI_BYTE, root, comm), "MPI_Bcast");
  }
  return py::bytes(buffer);
}

// Every member's bytes, in member order (instance order for the root scope).
std::vector<py::bytes> allgather_bytes(const std::string& data, const py::handle& timeout, const std::string& caller) {
  const auto seconds = popdist::python::timeout_seconds(timeout, caller.c_str());
  std::vector<std::string> pieces;
  {
    py::gil_scoped_release release;
    meet_within(seconds, caller);
    MPI_Comm comm = scope_communicator("allgather_bytes");
    int size = 0;
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    int length = checked_length(data.size(), "allgather_bytes");
    std::vector<int> lengths(static_cast<std::size_t>(size));
    check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "MPI_Allgather");
    std::vector<int> offsets(static_cast<std::size_t>(size));
    long long total = 0;
    for (int i = 0; i < size; ++i) {
      offsets[i] = static_cast<int>(total);
      total += lengths[i];
    }
    checked_length(static_cast<std::size_t>(total), "allgather_bytes");
    std::string gathered(static_cast<std::size_t>(total), '\0');
    check_mpi(MPI_Allgatherv(data.data(), length, MPI_BYTE, gathered.data(), lengths.data(), offsets.data(),
                             MPI_BYTE, comm),
              "MPI_Allgatherv");
    pieces.reserve(static_cast<std::size_t>(size));
    for (int i = 0; i < size; ++i) pieces.push_back(gathered.substr(offsets[i], lengths[i]));
  }
  return {pieces.begin(), pieces.end()};
}

}  // namespace

namespace popdist::python {

void register_collectives(py::module_& m) {
  m.def("broadcast_bytes", &broadcast_bytes, py::arg("data"), py::arg("root") = 0, py::arg("timeout") = py::none(),
        py::arg("caller") = "broadcast_bytes",
        "The root member's bytes on every member of the current scope (a collective; needs init()). With a "
        "timeout (seconds), bounded: TimeoutError naming the instances that did not take part, under `caller`.");
  m.def("allgather_bytes", &allgather_bytes, py::arg("data"), py::arg("timeout") = py::none(),
        py::arg("caller") = "allgather_bytes",
        "Every member's bytes, in member order, on every member of the current scope (a collective); `timeout` "
        "as for broadcast_bytes.");
}

}  // namespace popdist::python
