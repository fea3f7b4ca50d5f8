// wheel_probe: the library built against a PyPI MPI, run under `popdist run` on that MPI's
// launcher (tests/mpi_wheels). Each instance prints its topology, which MPI it was built for (the
// first line of MPI_Get_library_version) and that it passed a synchronize over the whole job and
// one over instances {0, 1}; a check script compares them with the launcher's view.
#include <popdist/popdist.hpp>

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

namespace {

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string first(text, static_cast<std::size_t>(length));
  return first.substr(0, first.find_first_of("\r\n,"));
}

}  // namespace

int main() {
  try {
    popdist::init();
    const int me = popdist::instance_index();
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // One printf per line: the agents tag whole lines.
    std::printf("instance %d of %d, local %d, replicas %d from %d of %d, MPI rank %d of %d, library %s\n", me,
                popdist::num_instances(), popdist::local_instance_index(), popdist::num_local_replicas(),
                popdist::replica_index_offset(), popdist::num_total_replicas(), rank, size, mpi_library().c_str());
    std::fflush(stdout);
    popdist::synchronize();
    std::printf("instance %d passed synchronize\n", me);
    std::fflush(stdout);
    if (popdist::num_instances() > 1) {
      popdist::synchronize("", popdist::InstanceSet{0, 1});
      if (me < 2) std::printf("instance %d passed synchronize of {0, 1}\n", me);
      std::fflush(stdout);
    }
    popdist::finalize();
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "wheel_probe: %s\n", error.what());
    popdist::abort_job(1);
  }
}
