// The `mpi` launcher family (POPDIST_LAUNCHER=mpi, design.md §3.2): never detected, only forced;
// without MPI a preview that says what init() will do; with MPI's world rank and size (what
// init() passes) the identity is MPI's, provenance "mpi", and the replica rules apply as usual.

#include <catch2/catch.hpp>

#include <string>

#include "env_support.hpp"
#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"

namespace popdist::testing {
namespace {

bool mentions(const std::vector<std::string>& warnings, const std::string& fragment) {
  for (const auto& warning : warnings) {
    if (warning.find(fragment) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("mpi family: never detected, even when every rank shares one environment", "[mpi-family]") {
  // SMPI's ranks, or an unknown launcher: no variables at all.
  CHECK(detect(lookup_in({})).launcher == Launcher::Singleton);
  CHECK(detect(lookup_in({}), MpiWorld{3, 8}).launcher == Launcher::Singleton);
  CHECK(parse_launcher_name("mpi") == Launcher::Mpi);
  CHECK(launcher_name(Launcher::Mpi) == "mpi");
}

TEST_CASE("mpi family without MPI: a preview saying where the identity will come from", "[mpi-family]") {
  const auto t = detect(lookup_in({{"POPDIST_LAUNCHER", "mpi"}}));
  CHECK(t.launcher == Launcher::Mpi);
  CHECK(t.instance_index == 0);
  CHECK(t.num_instances == 1);
  CHECK(t.popdist_env_set);
  CHECK(provenance_of(t, field::launcher) == "POPDIST_LAUNCHER");
  CHECK(provenance_of(t, field::instance_index) == "mpi (after init)");
  CHECK(provenance_of(t, field::num_instances) == "mpi (after init)");
  CHECK(mentions(t.warnings, "POPDIST_LAUNCHER=mpi"));
  CHECK(mentions(t.warnings, "world rank and size"));
  CHECK(mentions(t.warnings, "shared-memory split"));
}

TEST_CASE("mpi family with MPI's world: rank and size are MPI's, provenance mpi", "[mpi-family]") {
  const auto t = detect(lookup_in({{"POPDIST_LAUNCHER", "mpi"}}), MpiWorld{5, 16});
  CHECK(t.launcher == Launcher::Mpi);
  CHECK(t.instance_index == 5);
  CHECK(t.num_instances == 16);
  CHECK(t.replica_index_offset == 5);
  CHECK(t.num_total_replicas == 16);
  CHECK(provenance_of(t, field::instance_index) == "mpi");
  CHECK(provenance_of(t, field::num_instances) == "mpi");
  // Local index/count and host are left to init()'s shared-memory split.
  CHECK(provenance_of(t, field::local_instance_index) != "mpi (after init)");
  CHECK_FALSE(mentions(t.warnings, "world rank and size"));
}

TEST_CASE("mpi family: PopRun's replica variables apply to MPI's identity", "[mpi-family]") {
  const auto t = detect(lookup_in({{"POPDIST_LAUNCHER", "mpi"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                                   {"POPDIST_NUM_TOTAL_REPLICAS", "8"}}),
                        MpiWorld{3, 4});
  CHECK(t.num_local_replicas == 2);
  CHECK(t.replica_index_offset == 6);
  CHECK(t.num_total_replicas == 8);
}

TEST_CASE("mpi family: the launcher variables of another family are not mixed in", "[mpi-family]") {
  const auto t = detect(lookup_in({{"POPDIST_LAUNCHER", "mpi"}, {"OMPI_COMM_WORLD_RANK", "1"},
                                   {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}),
                        MpiWorld{1, 4});
  CHECK(t.launcher == Launcher::Mpi);
  CHECK(provenance_of(t, field::instance_index) == "mpi");
  CHECK(provenance_of(t, field::local_instance_index) != "OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST_CASE("mpi family: an impossible world is an error naming it", "[mpi-family]") {
  const auto env = lookup_in({{"POPDIST_LAUNCHER", "mpi"}});
  CHECK_THROWS_WITH(detect(env, MpiWorld{4, 4}), Catch::Contains("MPI world rank 4 of size 4"));
  CHECK_THROWS_WITH(detect(env, MpiWorld{0, 0}), Catch::Contains("expected 0 <= rank < size"));
}

}  // namespace
}  // namespace popdist::testing
