#pragma once
/// @file raw_timed_barriers.hpp
/// Baselines for a barrier with a deadline, written in plain MPI with nothing but the polling
/// (no error reporting, no give-up notices), to show what a timeout costs at the least:
///
/// - IbarrierPoll: MPI_Ibarrier, then MPI_Test until done or the deadline. The cheapest timed
///   barrier, but an MPI_Ibarrier cannot be cancelled, so it cannot tell who is missing or let
///   the job carry on after a timeout (which is why popdist does not use it).
/// - PointToPointPoll: popdist's protocol shape without its extras: every member posts an Irecv
///   from and an Isend to every other member, then polls MPI_Testall until done or the
///   deadline. Buffers and requests are allocated once. The gap between this and popdist's
///   timed synchronize is implementation cost; the gap between this and MPI_Barrier is the
///   protocol's.

#include <mpi.h>

#include <chrono>
#include <vector>

namespace popdist_bench {

class IbarrierPoll {
 public:
  IbarrierPoll(MPI_Comm comm, double seconds) : comm_(comm), timeout_(seconds) {}

  /// Returns false on a timeout (never expected here: the benchmark's ranks all arrive).
  bool operator()() const {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibarrier(comm_, &request);
    int done = 0;
    while (true) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
  }

 private:
  MPI_Comm comm_;
  std::chrono::duration<double> timeout_;
};

class PointToPointPoll {
 public:
  PointToPointPoll(MPI_Comm comm, double seconds) : comm_(comm), timeout_(seconds) {
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int r = 0; r < size; ++r)
      if (r != rank) others_.push_back(r);
    incoming_.resize(others_.size());
    requests_.resize(2 * others_.size());
  }

  bool operator()() {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    ++sequence_;
    const std::size_t n = others_.size();
    for (std::size_t i = 0; i < n; ++i)
      MPI_Irecv(&incoming_[i], 1, MPI_UNSIGNED_LONG, others_[i], kTag, comm_, &requests_[i]);
    for (std::size_t i = 0; i < n; ++i)
      MPI_Isend(&sequence_, 1, MPI_UNSIGNED_LONG, others_[i], kTag, comm_, &requests_[n + i]);
    int done = 0;
    while (true) {
      MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
      if (done) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
  }

 private:
  static constexpr int kTag = 4242;
  MPI_Comm comm_;
  std::chrono::duration<double> timeout_;
  std::vector<int> others_;
  std::vector<unsigned long> incoming_;
  std::vector<MPI_Request> requests_;
  unsigned long sequence_ = 0;
};

}  // namespace popdist_bench
