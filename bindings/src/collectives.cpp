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

#include <algorithm>
#include <chrono>
#include <climits>
#include <sstream>
#include <optional>
#include <string>
#include <thread>
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
using Clock = std::chrono::steady_clock;

/// Meets the others (above); returns the deadline of the collective that follows: what is left
/// of the timeout, but at least min(timeout, 1 s) (once everyone met, it takes microseconds).
std::optional<Clock::time_point> meet_within(const std::optional<double>& timeout, const std::string& caller) {
  if (!timeout) return std::nullopt;
  const auto start = Clock::now();
  try {
    popdist::synchronize("", {}, popdist::Seconds(*timeout));
  } catch (const popdist::TimeoutError& e) {
    std::ostringstream message;
    message << caller << ": every instance must take part, but not all did within " << *timeout
            << " s (an instance that exited, failed or is late): " << e.what();
    throw popdist::TimeoutError(message.str(), e.missing_instances());
  }
  const auto seconds = std::min(*timeout, 1e9);
  const auto full = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const auto least = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(std::min(seconds, 1.0)));
  return std::max(full, least);
}

// The collective after the meeting, bounded too: an instance that met this one in its own
// synchronize() (the same barrier) and then went elsewhere -- exited, or made another call --
// never enters it. Without a deadline, MPI's wait (as before). Ctrl-C is noticed every 50 ms.
void wait_for(MPI_Request* requests, int count, const std::optional<Clock::time_point>& deadline,
              const std::string& caller, const char* what) {
  if (!deadline) {
    check_mpi(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE), what);
    return;
  }
  auto last_signal_check = Clock::now();
  for (;;) {
    int done = 0;
    check_mpi(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), what);
    if (done != 0) return;
    const auto now = Clock::now();
    if (now >= *deadline) {
      throw popdist::TimeoutError(
          caller + ": every instance met, but not all entered the collective that follows (" + what +
              ") in time: an instance made another popdist call (such as synchronize()) or exited instead; "
              "every instance must make the same calls in the same order",
          {});
    }
    if (now - last_signal_check >= std::chrono::milliseconds(50)) {
      last_signal_check = now;
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// The root's bytes on every member. Non-roots pass anything (ignored). Two broadcasts: the
// length first, so that non-roots need not know it in advance.
py::bytes broadcast_bytes(const std::string& data, int root, const py::handle& timeout, const std::string& caller) {
  const auto seconds = popdist::python::timeout_seconds(timeout, caller.c_str());
  std::string buffer;
  {
    py::gil_scoped_release release;
    const auto deadline = meet_within(seconds, caller);
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
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(&length, 1, MPI_INT, root, comm, &request), "MPI_Ibcast");
    wait_for(&request, 1, deadline, caller, "MPI_Ibcast");
    buffer = rank == root ? data : std::string(static_cast<std::size_t>(length), '\0');
    if (length > 0) {
      check_mpi(MPI_Ibcast(buffer.data(), length, MPI_BYTE, root, comm, &request), "MPI_Ibcast");
      wait_for(&request, 1, deadline, caller, "MPI_Ibcast");
    }
  }
  return py::bytes(buffer);
}

// Every member's bytes, in member order (instance order for the root scope).
std::vector<py::bytes> allgather_bytes(const std::string& data, const py::handle& timeout, const std::string& caller) {
  const auto seconds = popdist::python::timeout_seconds(timeout, caller.c_str());
  std::vector<std::string> pieces;
  {
    py::gil_scoped_release release;
    const auto deadline = meet_within(seconds, caller);
    MPI_Comm comm = scope_communicator("allgather_bytes");
    int size = 0;
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    int length = checked_length(data.size(), "allgather_bytes");
    std::vector<int> lengths(static_cast<std::size_t>(size));
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm, &request), "MPI_Iallgather");
    wait_for(&request, 1, deadline, caller, "MPI_Iallgather");
    std::vector<int> offsets(static_cast<std::size_t>(size));
    long long total = 0;
    for (int i = 0; i < size; ++i) {
      offsets[i] = static_cast<int>(total);
      total += lengths[i];
    }
    checked_length(static_cast<std::size_t>(total), "allgather_bytes");
    std::string gathered(static_cast<std::size_t>(total), '\0');
    check_mpi(MPI_Iallgatherv(data.data(), length, MPI_BYTE, gathered.data(), lengths.data(), offsets.data(),
                              MPI_BYTE, comm, &request),
              "MPI_Iallgatherv");
    wait_for(&request, 1, deadline, caller, "MPI_Iallgatherv");
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
