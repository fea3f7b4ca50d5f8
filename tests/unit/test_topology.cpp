// The Topology value: launcher names, equality, the human-readable description.

#include <catch2/catch.hpp>

#include <cstddef>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"

namespace popdist::testing {

TEST_CASE("topology.launcher names round-trip", "[topology]") {
  for (const auto launcher : {Launcher::Singleton, Launcher::PopDist, Launcher::OpenMpi, Launcher::Mpich,
                              Launcher::Pals, Launcher::Mvapich2, Launcher::Slurm, Launcher::Torchrun}) {
    const auto name = launcher_name(launcher);
    INFO(name);
    REQUIRE(parse_launcher_name(name).has_value());
    CHECK(*parse_launcher_name(name) == launcher);
  }
  CHECK(launcher_name(Launcher::OpenMpi) == "openmpi");
  CHECK(launcher_name(Launcher::Mpich) == "mpich");
  CHECK(launcher_name(Launcher::PopDist) == "popdist");
  CHECK_FALSE(parse_launcher_name("OpenMPI").has_value());
  CHECK_FALSE(parse_launcher_name("").has_value());
  CHECK_FALSE(parse_launcher_name("srun").has_value());
}

TEST_CASE("topology.defaults are the unlaunched PopDist defaults", "[topology]") {
  const Topology t = detect(lookup_in({}));
  CHECK(t.launcher == Launcher::Singleton);
  CHECK(t.instance_index == 0);
  CHECK(t.num_instances == 1);
  CHECK(t.num_local_replicas == 1);
  CHECK(t.num_total_replicas == 1);
  CHECK(t.replica_index_offset == 0);
  CHECK(t.ipus_per_replica == 1);
  CHECK_FALSE(t.popdist_env_set);
  CHECK_FALSE(t.ipus_per_replica_set);
  CHECK(t.host_index == 0);
  CHECK(t.warnings.empty());
}

TEST_CASE("topology.equality compares every member", "[topology]") {
  const Topology base = detect(lookup_in({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  CHECK(base == base);
  auto changed = base;
  changed.instance_index = 0;
  CHECK(changed != base);
  changed = base;
  changed.host_index = 0;
  CHECK(changed != base);
  changed = base;
  changed.provenance["instance_index"] = "mpi";
  CHECK(changed != base);
  changed = base;
  changed.warnings.push_back("x");
  CHECK(changed != base);
  changed = base;
  changed.ipus_per_replica_set = true;
  CHECK(changed != base);
  changed = base;
  changed.launcher = Launcher::Mpich;
  CHECK(changed != base);
}

TEST_CASE("topology.each PopDist getter of the field table finds its row and reads its field", "[topology]") {
  std::set<std::string_view> getters;
  for (std::size_t row = 0; row < topology_fields.size(); ++row) {
    const auto& field = topology_fields[row];
    if (field.popdist_getter.empty()) {
      CHECK(field.popdist_getter_doc.empty());
      continue;
    }
    INFO(field.popdist_getter);
    CHECK(getters.insert(field.popdist_getter).second);  // one row per getter
    CHECK(popdist_getter_row(field.popdist_getter) == row);
    CHECK_FALSE(field.popdist_getter_doc.empty());  // the Python docstring
    // PopDist's getters return counts and flags; context.hpp's types follow from the kind.
    CHECK((field.kind == FieldKind::Integer || field.kind == FieldKind::Flag));
  }
  CHECK(getters.size() == 9);  // PopDist's nine topology getters (design.md §4)
  CHECK_THROWS_AS(popdist_getter_row("getDeviceId"), std::out_of_range);
  CHECK_THROWS_AS(popdist_getter_row(""), std::out_of_range);

  // Values that differ from field to field, so that a row reading the wrong member shows.
  Topology t = detect(lookup_in({{"OMPI_COMM_WORLD_RANK", "3"},
                                 {"OMPI_COMM_WORLD_SIZE", "4"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                 {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                                 {"POPDIST_NUM_IPUS_PER_REPLICA", "4"}}));
  CHECK(field_value<popdist_getter_row("getInstanceIndex")>(t) == 3);
  CHECK(field_value<popdist_getter_row("getNumTotalReplicas")>(t) == 8);
  CHECK(field_value<popdist_getter_row("getReplicaIndexOffset")>(t) == 6);
  CHECK(field_value<popdist_getter_row("isPopdistEnvSet")>(t));
  t.uniform_replicas_per_instance = false;
  CHECK_FALSE(field_value<popdist_getter_row("isUniformReplicasPerInstance")>(t));
}

TEST_CASE("topology.describe lists every field with its value and provenance, then warnings", "[topology]") {
  const Topology t = detect(lookup_in({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                       {"POPDIST_NUM_LOCAL_REPLICAS", "3"}, {"SLURM_STEP_ID", "0"},
                                       {"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}}));
  const std::string text = describe(t);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("launcher") && Catch::Contains("openmpi") &&
                       Catch::Contains("(OMPI_COMM_WORLD_SIZE)"));
  CHECK_THAT(text, Catch::Matches("(.|\n)*instance_index +2 +\\(OMPI_COMM_WORLD_RANK\\)(.|\n)*"));
  CHECK_THAT(text, Catch::Matches("(.|\n)*num_local_replicas +3 +\\(POPDIST_NUM_LOCAL_REPLICAS\\)(.|\n)*"));
  CHECK_THAT(text, Catch::Matches("(.|\n)*num_total_replicas +12 +\\(derived\\)(.|\n)*"));
  CHECK_THAT(text, Catch::Matches("(.|\n)*host_index +unknown +\\(default\\)(.|\n)*"));
  for (const char* field : {"num_instances", "local_instance_index", "num_local_instances", "replica_index_offset",
                            "ipus_per_replica", "uniform_replicas_per_instance", "popdist_env_set"}) {
    CHECK_THAT(text, Catch::Contains(field));
  }
  CHECK_THAT(text, Catch::Contains("warnings:\n  - slurm rank 0 of 1"));
  std::ostringstream printed;
  printed << t;
  CHECK(printed.str() == text);
  CHECK_THAT(describe(detect(lookup_in({}))), Catch::Contains("warnings: none"));
}

}  // namespace popdist::testing
