/* The baseline for popdist::init(): a bare MPI_Init_thread(MPI_THREAD_MULTIPLE), timed inside
 * the process around the call. Prints {"init_us": ...} on rank 0. Run singleton or under mpirun. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  int provided = 0;
  int rank = 0;
  const double start = now_seconds();
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const double elapsed = now_seconds() - start;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("{\"init_us\": %.1f, \"provided\": %d}\n", elapsed * 1e6, provided);
  MPI_Finalize();
  return 0;
}
