// Uses the installed popdist: detection from an injected environment (no MPI started), device
// ids, replica grouping, and a runtime query so that the MPI-backed library links as well.
#include <popdist/popdist.hpp>

#include <iostream>

int main() {
  // Instance 3 of 4 under Open MPI, two replicas of two IPUs each: replicas 6-7 of 8, and
  // device id 27 (DESIGN.md 4: 4 instances x 2 replicas x 2 devices on 16 -> 24..27).
  const popdist::Topology topology = popdist::detect(popdist::lookup_in({
      {"OMPI_COMM_WORLD_RANK", "3"},
      {"OMPI_COMM_WORLD_SIZE", "4"},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
      {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
      {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
      {"POPDIST_NUM_IPUS_PER_REPLICA", "2"},
  }));
  std::cout << "popdist " << popdist::version() << " headers " << POPDIST_VERSION_STRING << "\n";
  std::cout << "launcher " << popdist::launcher_name(topology.launcher) << " instance " << topology.instance_index
            << " of " << topology.num_instances << " replicas " << topology.replica_index_offset << "+"
            << topology.num_local_replicas << " of " << topology.num_total_replicas << " device id "
            << popdist::device_id(topology) << "\n";
  const popdist::ReplicaGrouping grouping(8, 2, 4);
  std::cout << "group of replica 5: " << grouping.group_of(5) << " of " << grouping.num_groups() << "\n";
  try {
    (void)popdist::detect(popdist::lookup_in({{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  } catch (const popdist::EnvironmentError& error) {
    std::cout << "caught EnvironmentError naming " << (std::string(error.what()).find("OMPI_COMM_WORLD_RANK") != std::string::npos ? "the variable" : "nothing") << "\n";
  }
  std::cout << "backend initialized: " << (popdist::is_initialized() ? "yes" : "no") << "\n";
  return 0;
}
