// getDeviceId in IPU numbering, the local device ordinals and checkNumIpusPerReplica (design.md §4).

#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "popdist/error.hpp"
#include "popdist/topology.hpp"

namespace popdist::testing {
namespace {

/// Instance `rank` of `instances` under mpirun with PopRun's variables.
Topology instance(int rank, int instances, int local_replicas, int ipus) {
  return detect(lookup_in({{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
                           {"OMPI_COMM_WORLD_SIZE", std::to_string(instances)},
                           {"POPDIST_NUM_LOCAL_REPLICAS", std::to_string(local_replicas)},
                           {"POPDIST_NUM_IPUS_PER_REPLICA", std::to_string(ipus)}}));
}

}  // namespace

TEST_CASE("device.4 instances x 2 replicas x 2 devices on 16 get ids 24..27", "[device]") {
  // Groups of 4 in a 16-device partition come after 16 singles and 8 pairs.
  for (int rank = 0; rank < 4; ++rank) CHECK(device_id(instance(rank, 4, 2, 2)) == 24 + rank);
}

TEST_CASE("device.one instance on 4 devices gets id 6 however the 4 are split", "[device]") {
  CHECK(device_id(instance(0, 1, 4, 1)) == 6);  // 4 single-device replicas
  CHECK(device_id(instance(0, 1, 1, 4)) == 6);  // 1 replica of 4 devices
  CHECK(device_id(instance(0, 1, 2, 2)) == 6);  // 2 replicas of 2
}

TEST_CASE("device.a single device is id 0", "[device]") {
  CHECK(device_id(detect(lookup_in({}))) == 0);
  CHECK(device_id(instance(0, 1, 1, 1)) == 0);
}

TEST_CASE("device.one device per instance: the singles, in instance order", "[device]") {
  for (int rank = 0; rank < 8; ++rank) CHECK(device_id(instance(rank, 8, 1, 1)) == rank);
}

TEST_CASE("device.pairs come after the singles", "[device]") {
  // 8 instances x 1 replica x 2 devices on 16: 16 singles, then pairs 16..23.
  for (int rank = 0; rank < 8; ++rank) CHECK(device_id(instance(rank, 8, 1, 2)) == 16 + rank);
}

TEST_CASE("device.a share that is not 1 or a power of two has no id, and the error names the counts", "[device]") {
  // IPUs are attached in groups of 1, 2, 4, 8, ...: 3 devices are no group.
  CHECK_THROWS_AS(device_id(instance(0, 1, 3, 1)), TopologyError);
  CHECK_THROWS_WITH(device_id(instance(0, 1, 3, 1)),
                    Catch::Contains("3 local replicas x 1 devices per replica = 3 devices per instance") &&
                        Catch::Contains("1 or a power of two"));
  CHECK_THROWS_WITH(device_id(instance(0, 2, 1, 6)), Catch::Contains("1 local replicas x 6 devices per replica"));
  CHECK_THROWS_WITH(device_id(instance(0, 1, 1, 1), 3), Catch::Contains("= 3 devices"));  // the argument counts
}

TEST_CASE("device.the argument overrides the topology's devices per replica", "[device]") {
  const auto t = instance(3, 4, 2, 1);
  CHECK(device_id(t) == 8 + 3);      // groups of 2 in 8: after 8 singles
  CHECK(device_id(t, 2) == 24 + 3);  // as if 2 devices per replica: groups of 4 in 16
  CHECK(device_id(t, 0) == device_id(t));
}

TEST_CASE("device.a negative argument is a UsageError naming it", "[device]") {
  const auto t = instance(0, 1, 1, 1);
  CHECK_THROWS_AS(device_id(t, -1), UsageError);
  CHECK_THROWS_WITH(device_id(t, -1), Catch::Contains("ipus_per_replica=-1") && Catch::Contains("expected 0"));
}

TEST_CASE("device.large partitions use 64-bit arithmetic", "[device]") {
  Topology t;
  t.num_local_replicas = 1 << 20;
  t.num_total_replicas = 1 << 20;
  t.ipus_per_replica = 1 << 10;
  // S = N = 2^30: the sum of 2^30 / 2^k for k = 0..29 is 2^31 - 2, more than INT_MAX.
  CHECK(device_id(t) == (std::int64_t{1} << 31) - 2);
  t.num_total_replicas = 1 << 30;
  t.num_local_replicas = 1;
  t.replica_index_offset = (1 << 30) - 1;
  t.ipus_per_replica = 1;
  CHECK(device_id(t) == (std::int64_t{1} << 30) - 1);
}

TEST_CASE("device.local ordinals: local replicas x devices from local index x that count", "[device]") {
  auto t = instance(1, 4, 2, 2);
  t.local_instance_index = 1;
  CHECK(local_device_ordinals(t) == std::vector<int>{4, 5, 6, 7});
  CHECK(local_device_ordinals(detect(lookup_in({}))) == std::vector<int>{0});
  const auto hydra = detect(lookup_in({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "2"},
                                       {"MPI_LOCALNRANKS", "3"}, {"POPDIST_NUM_IPUS_PER_REPLICA", "3"}}));
  CHECK(local_device_ordinals(hydra) == std::vector<int>{6, 7, 8});
}

TEST_CASE("device.local ordinals beyond int are a UsageError", "[device]") {
  Topology t;
  t.num_local_replicas = 1 << 10;
  t.ipus_per_replica = 1 << 10;
  t.local_instance_index = 2048;
  CHECK_THROWS_AS(local_device_ordinals(t), UsageError);
  CHECK_THROWS_WITH(local_device_ordinals(t), Catch::Contains("2147483647"));
}

TEST_CASE("device.huge counts are refused before anything is allocated; the range needs no list", "[device]") {
  Topology t;
  t.num_local_replicas = 2000000000;  // POPDIST_NUM_LOCAL_REPLICAS=2000000000
  t.ipus_per_replica = 1;
  CHECK_THROWS_WITH(local_device_ordinals(t), Catch::Contains("2000000000 devices") && Catch::Contains("1048576"));
  t.num_local_replicas = 2;
  t.ipus_per_replica = 1073741824;
  t.local_instance_index = 2147483647;
  CHECK_THROWS_AS(local_device_ordinals(t), UsageError);
  const DeviceRange range = local_device_range(t);
  CHECK(range.count == 2147483648);
  CHECK(range.first == std::int64_t{2147483647} * 2147483648);  // no overflow in 64 bits
  t.num_local_replicas = 2147483647;
  t.ipus_per_replica = 2147483647;
  CHECK(local_device_range(t).first == INT64_MAX);  // saturates instead of overflowing
}

TEST_CASE("device.check_ipus_per_replica", "[device]") {
  const auto set_to_2 = instance(0, 1, 1, 2);
  CHECK(check_ipus_per_replica(set_to_2, 2));
  CHECK_FALSE(check_ipus_per_replica(set_to_2, 1));
  CHECK_FALSE(check_ipus_per_replica(set_to_2, 4));
  const auto unset = detect(lookup_in({}));
  CHECK(check_ipus_per_replica(unset, 1));
  CHECK_FALSE(check_ipus_per_replica(unset, 2));
  CHECK_FALSE(check_ipus_per_replica(unset, 0));
}

}  // namespace popdist::testing
