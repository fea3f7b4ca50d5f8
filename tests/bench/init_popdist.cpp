// popdist::init() timed inside the process around the call (MPI_Init_thread, the topology
// check across instances, the shared-memory split). The counterpart of init_raw.c.
// Prints {"init_us": ...} on rank 0. Run singleton or under mpirun.

#include <mpi.h>

#include <cstdio>
#include <ctime>
#include <exception>

#include "popdist/popdist.hpp"

namespace {
double now_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

int main() {
  try {
    const double start = now_seconds();
    popdist::init();
    const double elapsed = now_seconds() - start;
    if (popdist::instance_index() == 0) std::printf("{\"init_us\": %.1f}\n", elapsed * 1e6);
    popdist::finalize();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "init_popdist: %s\n", error.what());
    return 1;
  }
  return 0;
}
