// PopDist's host collectives (collectives.hpp) over the communicators the registry owns.
#include "popdist/collectives.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/deadline.hpp"
#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "popdist/registry.hpp"
#include "popdist/runtime.hpp"
#include "registry/collective_meeting.hpp"
#include "registry/registry.hpp"
#include "registry/scope.hpp"

namespace popdist::collectives {
namespace {

MPI_Datatype mpi_type(ElementType type) {
  switch (type) {
    case ElementType::FLOAT: return MPI_FLOAT;
    case ElementType::HALF: return MPI_UINT16_T;  // moved as bits; summed in float (below)
    case ElementType::DOUBLE: return MPI_DOUBLE;
    case ElementType::INT: return MPI_INT32_T;
    case ElementType::UNSIGNED_INT: return MPI_UINT32_T;
    case ElementType::LONGLONG: return MPI_INT64_T;
    case ElementType::UNSIGNED_LONGLONG: return MPI_UINT64_T;
  }
  throw UsageError("popdist collectives: unknown ElementType " + std::to_string(static_cast<int>(type)));
}

// The communicator of a call, or MPI_COMM_NULL when this instance is not a member (it returns at
// once). Not initialized: only a job of one instance may go on, alone.
struct Group {
  MPI_Comm comm = MPI_COMM_NULL;
  int size = 1;
  int rank = 0;
  bool alone = false;  ///< one instance, no MPI
  detail::Entry* entry = nullptr;  ///< the set, for the meeting under POPDIST_SYNC_TIMEOUT
};

Group group_of(const std::string& id, const char* caller) {
  Group group;
  if (!is_initialized()) {
    if (num_instances() == 1) {
      group.alone = true;
      return group;
    }
    throw UsageError(std::string(caller) + ": call popdist::init() first (a job of " + std::to_string(num_instances()) +
                     " instances)");
  }
  group.comm = native_communicator(id);
  if (group.comm == MPI_COMM_NULL) return group;
  group.entry = id.empty() ? detail::current_entry() : &detail::registry().named(id, caller);
  detail::MpiLock lock;
  detail::check_mpi(MPI_Comm_size(group.comm, &group.size), "MPI_Comm_size");
  detail::check_mpi(MPI_Comm_rank(group.comm, &group.rank), "MPI_Comm_rank");
  return group;
}

// With POPDIST_SYNC_TIMEOUT set, the members meet first and each MPI call is nonblocking and
// waited for within the deadline (registry/collective_meeting.hpp); without, the blocking call.
detail::Deadline meet(const Group& group, const char* caller) {
  return detail::meet_for_collective(*group.entry, caller, caller, detail::collective_timeout(std::nullopt));
}

template <typename Blocking, typename Nonblocking>
void call(const detail::Deadline& deadline, const char* caller, const char* function, const Blocking& blocking,
          const Nonblocking& nonblocking) {
  if (!deadline.bounded()) {
    detail::MpiLock lock;
    detail::check_mpi(blocking(), function);
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  {
    detail::MpiLock lock;
    detail::check_mpi(nonblocking(&request), function);
  }
  detail::finish_collective(&request, 1, deadline, caller, function);
}

void check_root(int root, const Group& group, const char* caller) {
  if (root < 0 || root >= group.size) {
    throw UsageError(std::string(caller) + ": root " + std::to_string(root) + " is not a member index of the " +
                     "communicator (0.." + std::to_string(group.size - 1) + ")");
  }
}

void check_buffer(const void* data, std::size_t count, const char* caller, const char* name = "data") {
  if (data == nullptr && count > 0) {
    throw UsageError(std::string(caller) + ": " + name + " is null but count is " + std::to_string(count));
  }
}

// Broadcast in pieces of at most `piece_bytes` (and INT_MAX elements), one after another.
void broadcast_in_pieces(void* data, std::size_t count, ElementType type, int root, const std::string& id,
                         std::size_t piece_bytes, const char* caller) {
  check_buffer(data, count, caller);
  const Group group = group_of(id, caller);
  check_root(root, group, caller);
  if (group.alone || group.comm == MPI_COMM_NULL || count == 0) return;
  const std::size_t size = element_size(type);
  const std::size_t piece = std::max<std::size_t>(1, std::min<std::size_t>(piece_bytes / size, INT_MAX));
  auto* bytes = static_cast<unsigned char*>(data);
  const auto deadline = meet(group, caller);
  for (std::size_t done = 0; done < count; done += piece) {
    const int n = static_cast<int>(std::min(piece, count - done));
    auto* at = bytes + done * size;
    call(deadline, caller, "MPI_Bcast", [&] { return MPI_Bcast(at, n, mpi_type(type), root, group.comm); },
         [&](MPI_Request* r) { return MPI_Ibcast(at, n, mpi_type(type), root, group.comm, r); });
  }
}

}  // namespace

std::size_t element_size(ElementType type) noexcept {
  switch (type) {
    case ElementType::HALF: return 2;
    case ElementType::FLOAT:
    case ElementType::INT:
    case ElementType::UNSIGNED_INT: return 4;
    case ElementType::DOUBLE:
    case ElementType::LONGLONG:
    case ElementType::UNSIGNED_LONGLONG: return 8;
  }
  return 1;
}

void broadcast(void* data, std::size_t count, ElementType type, int root, const std::string& communicatorId) {
  broadcast_in_pieces(data, count, type, root, communicatorId, std::size_t(INT_MAX), "broadcast");
}

namespace sequential {
void broadcast(void* data, std::size_t count, ElementType type, int root, const std::string& communicatorId) {
  constexpr std::size_t piece_bytes = std::size_t(64) << 20;
  broadcast_in_pieces(data, count, type, root, communicatorId, piece_bytes, "sequential::broadcast");
}
}  // namespace sequential

void allReduceSum(void* data, std::size_t count, ElementType type, const std::string& communicatorId) {
  check_buffer(data, count, "allReduceSum");
  const Group group = group_of(communicatorId, "allReduceSum");
  if (group.alone || group.comm == MPI_COMM_NULL || count == 0) return;
  // binary16 has no MPI sum: add in float and round once.
  std::vector<float> widened;
  void* buffer = data;
  ElementType wire = type;
  if (type == ElementType::HALF) {
    const auto* halves = static_cast<const std::uint16_t*>(data);
    widened.resize(count);
    std::transform(halves, halves + count, widened.begin(), half_to_float);
    buffer = widened.data();
    wire = ElementType::FLOAT;
  }
  const std::size_t size = element_size(wire);
  auto* bytes = static_cast<unsigned char*>(buffer);
  const auto deadline = meet(group, "allReduceSum");
  for (std::size_t done = 0; done < count; done += INT_MAX) {
    const int n = static_cast<int>(std::min<std::size_t>(INT_MAX, count - done));
    auto* at = bytes + done * size;
    call(deadline, "allReduceSum", "MPI_Allreduce",
         [&] { return MPI_Allreduce(MPI_IN_PLACE, at, n, mpi_type(wire), MPI_SUM, group.comm); },
         [&](MPI_Request* r) { return MPI_Iallreduce(MPI_IN_PLACE, at, n, mpi_type(wire), MPI_SUM, group.comm, r); });
  }
  if (type == ElementType::HALF) {
    std::transform(widened.begin(), widened.end(), static_cast<std::uint16_t*>(data), float_to_half);
  }
}

void allGather(const void* send, void* receive, std::size_t count, ElementType type, const std::string& communicatorId) {
  check_buffer(send, count, "allGather", "send");
  check_buffer(receive, count, "allGather", "receive");
  const Group group = group_of(communicatorId, "allGather");
  if (group.comm == MPI_COMM_NULL && !group.alone) return;
  if (count == 0) return;
  const std::size_t bytes = count * element_size(type);
  if (group.alone) {
    if (send != receive) std::memmove(receive, send, bytes);
    return;
  }
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw UsageError("allGather: count " + std::to_string(count) + " is larger than " + std::to_string(INT_MAX) +
                     " elements per member");
  }
  // MPI forbids aliasing the send buffer with the receive buffer: gather from a copy when they overlap.
  const auto* from = static_cast<const unsigned char*>(send);
  const auto* to = static_cast<const unsigned char*>(receive);
  std::vector<unsigned char> copy;
  if (from < to + bytes * static_cast<std::size_t>(group.size) && to < from + bytes) {
    copy.assign(from, from + bytes);
    send = copy.data();
  }
  const int n = static_cast<int>(count);
  call(meet(group, "allGather"), "allGather", "MPI_Allgather",
       [&] { return MPI_Allgather(send, n, mpi_type(type), receive, n, mpi_type(type), group.comm); },
       [&](MPI_Request* r) { return MPI_Iallgather(send, n, mpi_type(type), receive, n, mpi_type(type), group.comm, r); });
}

}  // namespace popdist::collectives
