// init(): idempotent, the topology agrees with MPI, every instance's view is gathered, and the
// host layout comes from MPI's shared-memory split (here: one real host).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "mpi_test_support.hpp"

using namespace popdist_test;

TEST_CASE("MPI.init is idempotent and agrees with MPI", "[init]") {
  const auto detected_index = popdist::instance_index();  // before init: from the launcher
  popdist::init();
  popdist::init();
  CHECK(popdist::is_initialized());
  int initialized = 0;
  MPI_Initialized(&initialized);
  CHECK(initialized == 1);
  CHECK(popdist::instance_index() == world_rank());
  CHECK(detected_index == world_rank());
  CHECK(popdist::num_instances() == world_size());
  CHECK(popdist::topology().launcher == popdist::Launcher::OpenMpi);
  CHECK(everyone(true));
}

TEST_CASE("MPI.init gathers every instance's view", "[init]") {
  popdist::init();
  const auto& views = popdist::instance_views();
  const auto n = world_size();
  REQUIRE(static_cast<int>(views.size()) == n);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  for (int i = 0; i < n; ++i) {
    const auto& view = views[static_cast<std::size_t>(i)];
    INFO("instance " << i);
    CHECK(view.topology.instance_index == i);
    CHECK(view.topology.num_instances == n);
    CHECK(view.hostname == std::string(host));  // one real host
    CHECK(view.topology.host_index == 0);
    CHECK(view.topology.local_instance_index == i);
    CHECK(view.topology.num_local_instances == n);
    CHECK(view.topology.replica_index_offset == i);
  }
  // Open MPI gives no node index: the host index is MPI's, and says so.
  CHECK(popdist::topology().host_index == 0);
  CHECK(popdist::topology().provenance.at("host_index") == "mpi");
  CHECK(popdist::topology() == views[static_cast<std::size_t>(world_rank())].topology);
  CHECK(everyone(true));
}

TEST_CASE("MPI.replica_ranges tile the job", "[init]") {
  popdist::init();
  const auto ranges = popdist::replica_ranges();
  REQUIRE(static_cast<int>(ranges.size()) == world_size());
  int next = 0;
  for (const auto& range : ranges) {
    CHECK(range.offset == next);
    next += range.count;
  }
  CHECK(next == popdist::num_total_replicas());
}

TEST_CASE("MPI.native_communicator of the root scope spans MPI_COMM_WORLD", "[init]") {
  popdist::init();
  const auto comm = popdist::native_communicator();
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(comm, MPI_COMM_WORLD, &result);
  CHECK(result == MPI_CONGRUENT);  // a duplicate: same group, a context of its own
  CHECK(everyone(result == MPI_CONGRUENT));
}
