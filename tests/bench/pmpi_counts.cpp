#include "pmpi_counts.hpp"

#include <mpi.h>

#include <atomic>

namespace popdist_bench {
namespace {

std::atomic<std::uint64_t> g_sends{0}, g_sent_bytes{0}, g_collectives{0}, g_received_bytes{0};

std::uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

int size_of(MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  return size;
}

void sent(int count, MPI_Datatype type) {
  g_sends.fetch_add(1, std::memory_order_relaxed);
  g_sent_bytes.fetch_add(bytes_of(count, type), std::memory_order_relaxed);
}

void collective(std::uint64_t received) {
  g_collectives.fetch_add(1, std::memory_order_relaxed);
  g_received_bytes.fetch_add(received, std::memory_order_relaxed);
}

}  // namespace

MpiCounts mpi_counts() noexcept {
  return {g_sends.load(), g_sent_bytes.load(), g_collectives.load(), g_received_bytes.load()};
}

MpiCounts operator-(const MpiCounts& a, const MpiCounts& b) noexcept {
  return {a.sends - b.sends, a.sent_bytes - b.sent_bytes, a.collectives - b.collectives,
          a.received_bytes - b.received_bytes};
}

}  // namespace popdist_bench

using popdist_bench::bytes_of;
using popdist_bench::collective;
using popdist_bench::sent;
using popdist_bench::size_of;

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  sent(count, type);
  return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  sent(count, type);
  return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  popdist_bench::g_received_bytes.fetch_add(bytes_of(count, type), std::memory_order_relaxed);
  return PMPI_Irecv(buf, count, type, source, tag, comm, req);
}
int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  popdist_bench::g_received_bytes.fetch_add(bytes_of(count, type), std::memory_order_relaxed);
  return PMPI_Mrecv(buf, count, type, message, status);
}
int MPI_Barrier(MPI_Comm comm) {
  collective(0);
  return PMPI_Barrier(comm);
}
int MPI_Allreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  collective(bytes_of(count, type));
  return PMPI_Allreduce(s, r, count, type, op, comm);
}
int MPI_Iallreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* q) {
  collective(bytes_of(count, type));
  return PMPI_Iallreduce(s, r, count, type, op, comm, q);
}
int MPI_Iexscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* q) {
  collective(bytes_of(count, type));
  return PMPI_Iexscan(s, r, count, type, op, comm, q);
}
int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* q) {
  collective(bytes_of(count, type));
  return PMPI_Ibcast(buf, count, type, root, comm, q);
}
int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  collective(bytes_of(count, type));
  return PMPI_Bcast(buf, count, type, root, comm);
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm) {
  collective(bytes_of(rc, rt) * static_cast<std::uint64_t>(size_of(comm)));
  return PMPI_Allgather(s, sc, st, r, rc, rt, comm);
}
int MPI_Iallgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request* q) {
  collective(bytes_of(rc, rt) * static_cast<std::uint64_t>(size_of(comm)));
  return PMPI_Iallgather(s, sc, st, r, rc, rt, comm, q);
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* out) {
  collective(0);
  return PMPI_Comm_create_group(comm, group, tag, out);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out) {
  // Inside MPI an allgather of (color, key) pairs: 8 bytes from every process.
  collective(8ULL * static_cast<std::uint64_t>(size_of(comm)));
  return PMPI_Comm_split_type(comm, type, key, info, out);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  collective(8ULL * static_cast<std::uint64_t>(size_of(comm)));
  return PMPI_Comm_split(comm, color, key, out);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) {
  collective(0);
  return PMPI_Comm_dup(comm, out);
}

}  // extern "C"
