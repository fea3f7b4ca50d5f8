// The byte collectives behind popdist.torch and popdist.lightning (collectives.hpp, detail):
// instance 0 broadcasting a rendezvous address, every instance gathering a seed. Bytes in, bytes
// out, so the Python side decides the encoding and no MPI datatype leaks into Python. Bounded by
// synchronize's timeout rule (registry/collective_meeting.hpp); untimed, plain MPI collectives.
#include <mpi.h>

#include <climits>
#include <string>
#include <vector>

#include "mpi/deadline.hpp"
#include "mpi/mpi_call.hpp"
#include "popdist/collectives.hpp"
#include "popdist/error.hpp"
#include "popdist/registry.hpp"
#include "registry/collective_meeting.hpp"
#include "registry/scope.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {
namespace {

struct Scope {
  Entry* entry = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  int size = 0;
  int rank = 0;
};

Scope scope_of(const char* function) {
  require_initialized(function);
  Scope scope;
  scope.entry = current_entry();
  scope.comm = native_communicator("", {}, function);
  if (scope.entry == nullptr || scope.comm == MPI_COMM_NULL) {
    throw UsageError(std::string(function) + ": this instance is not a member of the current scope");
  }
  MpiLock lock;
  check_mpi(MPI_Comm_size(scope.comm, &scope.size), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(scope.comm, &scope.rank), "MPI_Comm_rank");
  return scope;
}

int checked_length(std::size_t size, const char* function) {
  if (size > static_cast<std::size_t>(INT_MAX)) {
    throw UsageError(std::string(function) + ": data of " + std::to_string(size) + " bytes is larger than the limit of " +
                     std::to_string(INT_MAX) + " bytes");
  }
  return static_cast<int>(size);
}

/// Starts one nonblocking collective and waits for it within `deadline`.
template <typename Start>
void run(const Start& start, const Deadline& deadline, const std::string& caller, const char* function) {
  MPI_Request request = MPI_REQUEST_NULL;
  {
    MpiLock lock;
    check_mpi(start(&request), function);
  }
  if (!deadline.bounded()) {  // untimed: MPI's own wait, as a plain collective
    MpiLock lock;
    check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), function);
    return;
  }
  finish_collective(&request, 1, deadline, caller, function);
}

}  // namespace

std::string broadcast_bytes(const std::string& data, int root, std::optional<double> timeout,
                            const std::string& operation) {
  const Scope scope = scope_of("broadcast_bytes");
  if (root < 0 || root >= scope.size) {
    throw UsageError("broadcast_bytes: root " + std::to_string(root) + " is not in 0.." + std::to_string(scope.size - 1));
  }
  const auto what = operation + " (broadcast of bytes)";
  const auto deadline = meet_for_collective(*scope.entry, operation, what, collective_timeout(timeout));
  // Two broadcasts: the length first, so that non-roots need not know it in advance.
  int length = scope.rank == root ? checked_length(data.size(), "broadcast_bytes") : 0;
  run([&](MPI_Request* r) { return MPI_Ibcast(&length, 1, MPI_INT, root, scope.comm, r); }, deadline, operation, "MPI_Ibcast");
  std::string buffer = scope.rank == root ? data : std::string(static_cast<std::size_t>(length), '\0');
  if (length > 0) {
    run([&](MPI_Request* r) { return MPI_Ibcast(buffer.data(), length, MPI_BYTE, root, scope.comm, r); }, deadline,
        operation, "MPI_Ibcast");
  }
  return buffer;
}

std::vector<std::string> allgather_bytes(const std::string& data, std::optional<double> timeout,
                                         const std::string& operation) {
  const Scope scope = scope_of("allgather_bytes");
  const auto what = operation + " (allgather of bytes)";
  const auto deadline = meet_for_collective(*scope.entry, operation, what, collective_timeout(timeout));
  int length = checked_length(data.size(), "allgather_bytes");
  std::vector<int> lengths(static_cast<std::size_t>(scope.size));
  run([&](MPI_Request* r) { return MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, scope.comm, r); },
      deadline, operation, "MPI_Iallgather");
  std::vector<int> offsets(static_cast<std::size_t>(scope.size));
  long long total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = static_cast<int>(std::min<long long>(total, INT_MAX));
    total += lengths[i];
  }
  checked_length(static_cast<std::size_t>(total), "allgather_bytes");
  std::string gathered(static_cast<std::size_t>(total), '\0');
  run([&](MPI_Request* r) {
        return MPI_Iallgatherv(data.data(), length, MPI_BYTE, gathered.data(), lengths.data(), offsets.data(), MPI_BYTE,
                               scope.comm, r);
      },
      deadline, operation, "MPI_Iallgatherv");
  std::vector<std::string> pieces;
  pieces.reserve(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) pieces.push_back(gathered.substr(offsets[i], lengths[i]));
  return pieces;
}

}  // namespace popdist::detail
