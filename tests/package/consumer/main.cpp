// Uses the installed popdist: detection from an injected environment (no MPI started), device
// ids, replica grouping, and a runtime query so that the MPI-backed library links as well.
#include <popdist/popdist.hpp>
// PopDist's own header names compile against popdist too (docs/guide/cpp.md: PopDist's C++ API).
#include <popdist/backend.hpp>
#include <popdist/collectives.hpp>
#include <popdist/context.hpp>

#include <cstdint>
#include <iostream>

int main() {
  // Instance 3 of 4 under Open MPI, two replicas of two IPUs each: replicas 6-7 of 8, and
  // device id 27 (design.md §4: 4 instances x 2 replicas x 2 devices on 16 -> 24..27).
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
  // A PopDist program, unlaunched: one instance, so the collectives work without init().
  float weights[2] = {1.0f, 2.0f};
  popdist::collectives::broadcast(weights, 2, popdist::collectives::FLOAT, 0, popdist::defaultCommunicatorId());
  std::uint16_t half = popdist::collectives::float_to_half(0.5f);
  popdist::collectives::allReduceSum(&half, 1, popdist::collectives::HALF);
  std::int64_t gathered = 0;
  const std::int64_t mine = 7;
  popdist::collectives::allGather(&mine, &gathered, 1);
  popdist::collectives::sequential::broadcast(weights, 2, popdist::collectives::FLOAT, 0);
  try {
    popdist::registerCommunicator({0});  // needs init()
  } catch (const popdist::popdist_error&) {
    std::cout << "PopDist API: instance " << popdist::getInstanceIndex() << " of " << popdist::getNumInstances()
              << ", gathered " << gathered << ", half " << popdist::collectives::half_to_float(half)
              << ", popdist_error caught\n";
  }
  return 0;
}
