// MPI initialized by someone else first (as mpi4py does), at MPI_THREAD_SERIALIZED: popdist
// uses it, serializes its calls, and finalize() does not finalize what it did not initialize.
#include "fault_main_support.hpp"

using namespace popdist_test;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  Verdict verdict;
  popdist::init();
  popdist::init();
  verdict.check(popdist::is_initialized(), "initialized");
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  verdict.check(popdist::instance_index() == rank, "instance index == rank");
  popdist::synchronize();
  popdist::synchronize("", {0});
  popdist::register_communicator(popdist::InstanceSet{0, popdist::num_instances() - 1}, "ends");
  popdist::synchronize("ends", {}, popdist::Seconds(20));
  popdist::finalize();
  verdict.check(!popdist::is_initialized(), "not initialized after finalize");
  int finalized = 1;
  MPI_Finalized(&finalized);
  verdict.check(finalized == 0, "popdist::finalize() left the host program's MPI alone");
  popdist::finalize();  // idempotent
  int all = 0;
  int mine = 1;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);  // MPI still works
  verdict.check(all == popdist::num_instances(), "MPI still usable");
  const int code = verdict.finish("pre-initialized MPI");
  MPI_Finalize();
  return code;
}
