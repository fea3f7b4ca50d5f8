#pragma once
// Helpers shared by the MPI tests. The rule: agree first, then assert. Local checks use Catch's
// non-fatal CHECK*, so every rank always reaches the next collective; a result that needs all
// ranks is combined with everyone() before it is asserted.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "popdist/popdist.hpp"

namespace popdist_test {

/// True on every rank when `ok` is true on every rank (MPI_Allreduce over MPI_COMM_WORLD).
inline bool everyone(bool ok) {
  int mine = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// The size of a communicator (MPI_COMM_NULL: 0).
inline int size_of(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return 0;
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

/// {0, 1, ..., n-1}
inline popdist::InstanceSet all_instances(int n) {
  popdist::InstanceSet set;
  for (int i = 0; i < n; ++i) set.insert(i);
  return set;
}

/// Median of the wall time of `repetitions` calls of `body`, in microseconds.
template <class Body>
double median_microseconds(int repetitions, Body&& body) {
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(repetitions));
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

}  // namespace popdist_test
