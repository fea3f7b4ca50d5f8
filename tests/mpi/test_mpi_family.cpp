// POPDIST_LAUNCHER=mpi under the real mpirun: the identity is MPI's own (world rank and size,
// the shared-memory split for the local index, count and host), provenance "mpi", and the
// registry works over it as under any launcher.
#include <catch2/catch.hpp>
#include <string>

#include "mpi_test_support.hpp"

using namespace popdist_test;

TEST_CASE("MPI.mpi_family: before init a preview, after init MPI's identity", "[mpi-family]") {
  CHECK(popdist::topology().launcher == popdist::Launcher::Mpi);
  CHECK(popdist::topology().provenance.at("instance_index") == "mpi (after init)");
  popdist::init();
  const auto& t = popdist::topology();
  CHECK(t.launcher == popdist::Launcher::Mpi);
  CHECK(t.instance_index == world_rank());
  CHECK(t.num_instances == world_size());
  CHECK(t.provenance.at("instance_index") == "mpi");
  CHECK(t.provenance.at("num_instances") == "mpi");
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank(), MPI_INFO_NULL, &shared);
  int local_rank = 0, local_size = 0;
  MPI_Comm_rank(shared, &local_rank);
  MPI_Comm_size(shared, &local_size);
  MPI_Comm_free(&shared);
  CHECK(t.local_instance_index == local_rank);
  CHECK(t.num_local_instances == local_size);
  CHECK(t.provenance.at("local_instance_index") == "mpi");
  CHECK(t.provenance.at("num_local_instances") == "mpi");
  CHECK(t.host_index == 0);
  CHECK(t.replica_index_offset == world_rank());
  CHECK(everyone(true));
}

TEST_CASE("MPI.mpi_family: registration and synchronize over MPI's identity", "[mpi-family]") {
  popdist::init();
  const int n = world_size();
  popdist::register_communicator(all_instances(n), "mpi-family/all");
  popdist::synchronize("mpi-family/all");
  popdist::synchronize("mpi-family/all", {}, popdist::Seconds(30.0));
  CHECK(everyone(true));
}
