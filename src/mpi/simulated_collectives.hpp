#pragma once
// Simulation build only (POPDIST_SIMULATION=ON force-includes this header into the library's
// sources): popdist's nonblocking collectives become MPI's blocking ones, because SimGrid SMPI
// implements the nonblocking ones naively (all-to-all or linear chains) while real MPI libraries
// run them with the blocking ones' algorithms. What is lost: the deadlines around these waits (a
// member that never comes to init() hangs the simulation). The measured cost and the details:
// docs/guide/simulation.md, "Blocking collectives in the simulation".

#include <mpi.h>

#include <cstring>
#include <vector>

namespace popdist::detail::simulated {

inline int iallreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                      MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Allreduce(send, receive, count, type, op, comm);
}

/// MPI_Exscan by recursive doubling (MPICH's algorithm; ceil(log2 N) exchanges per rank): SMPI's
/// own MPI_Exscan is linear (every rank receives from every lower rank, 117 s of real time at 256
/// simulated ranks). For commutative operations, which are the only ones popdist scans with.
inline int iexscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  int rank = 0;
  int size = 0;
  int type_size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Type_size(type, &type_size);
  const auto bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(type_size);
  std::vector<char> partial(static_cast<const char*>(send), static_cast<const char*>(send) + bytes);
  std::vector<char> incoming(bytes);
  bool have_result = false;
  constexpr int kTag = 0x5ca9;  // on `comm` while every rank is in this call: no other traffic
  for (int mask = 1; mask < size; mask <<= 1) {
    const int partner = rank ^ mask;
    if (partner >= size) continue;
    const int status = MPI_Sendrecv(partial.data(), count, type, partner, kTag, incoming.data(), count, type,
                                    partner, kTag, comm, MPI_STATUS_IGNORE);
    if (status != MPI_SUCCESS) return status;
    if (partner < rank) {
      if (have_result) {
        MPI_Reduce_local(incoming.data(), receive, count, type, op);  // receive = incoming op receive
      } else {
        std::memcpy(receive, incoming.data(), bytes);
        have_result = true;
      }
    }
    MPI_Reduce_local(incoming.data(), partial.data(), count, type, op);  // partial = incoming op partial
  }
  return MPI_SUCCESS;
}

inline int ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Bcast(buffer, count, type, root, comm);
}

inline int iallgather(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                      MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Allgather(send, send_count, send_type, receive, receive_count, receive_type, comm);
}

inline int iallgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                       const int* receive_counts, const int* displacements, MPI_Datatype receive_type, MPI_Comm comm,
                       MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Allgatherv(send, send_count, send_type, receive, receive_counts, displacements, receive_type, comm);
}

inline int ibarrier(MPI_Comm comm, MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Barrier(comm);
}

}  // namespace popdist::detail::simulated

// The call sites stay MPI's own names (they are the real build's code).
#define MPI_Iallreduce ::popdist::detail::simulated::iallreduce
#define MPI_Iexscan ::popdist::detail::simulated::iexscan
#define MPI_Ibcast ::popdist::detail::simulated::ibcast
#define MPI_Iallgather ::popdist::detail::simulated::iallgather
#define MPI_Iallgatherv ::popdist::detail::simulated::iallgatherv
#define MPI_Ibarrier ::popdist::detail::simulated::ibarrier
