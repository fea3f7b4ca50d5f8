// ReplicaGrouping with PopXL's rules: the three examples of design.md §6 (PopXL's replication
// chapter), PopXL's transpose examples, retrieval modes, hosting instances, bad arguments.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "popdist/error.hpp"
#include "popdist/grouping.hpp"

namespace popdist::testing {

using Groups = std::vector<std::vector<int>>;

TEST_CASE("grouping.table: replication factor 16, group_size 4, stride 1", "[grouping]") {
  const ReplicaGrouping grouping(16, 4, 1);
  CHECK(grouping.num_groups() == 4);
  CHECK(grouping.groups() == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(grouping.group_of(5) == 1);
  CHECK(grouping.group_of(15) == 3);
}

TEST_CASE("grouping.table: replication factor 16, group_size 4, stride 4", "[grouping]") {
  const ReplicaGrouping grouping(16, 4, 4);
  CHECK(grouping.num_groups() == 4);
  CHECK(grouping.groups() == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(grouping.group_of(5) == 1);
  CHECK(grouping.group_of(14) == 2);
}

TEST_CASE("grouping.table: replication factor 16, group_size 1, stride 1", "[grouping]") {
  const ReplicaGrouping grouping(16, 1, 1);
  CHECK(grouping.num_groups() == 16);
  for (int replica = 0; replica < 16; ++replica) {
    CHECK(grouping.members(replica) == std::vector<int>{replica});
    CHECK(grouping.group_of(replica) == replica);
  }
}

TEST_CASE("grouping.one group by default", "[grouping]") {
  const ReplicaGrouping grouping(8);
  CHECK(grouping.group_size() == 8);
  CHECK(grouping.stride() == 1);
  CHECK(grouping.groups() == Groups{{0, 1, 2, 3, 4, 5, 6, 7}});
  CHECK(grouping == ReplicaGrouping(8, 8, 1));
  CHECK(grouping != ReplicaGrouping(8, 4, 1));
}

TEST_CASE("grouping.PopXL's assignment examples for 8 replicas", "[grouping]") {
  // popxl ReplicaGrouping.assignment: the group of each replica.
  const auto assignment = [](const ReplicaGrouping& grouping) {
    std::vector<int> groups;
    for (int replica = 0; replica < grouping.replication_factor(); ++replica) {
      groups.push_back(grouping.group_of(replica));
    }
    return groups;
  };
  CHECK(assignment(ReplicaGrouping(8, 8, 1)) == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(assignment(ReplicaGrouping(8, 1, 1)) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(assignment(ReplicaGrouping(8, 2, 1)) == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(assignment(ReplicaGrouping(8, 4, 1)) == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(assignment(ReplicaGrouping(8, 4, 2)) == std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1});
}

TEST_CASE("grouping.transpose follows PopXL's examples", "[grouping]") {
  // [0,0,0,0] -> [0,1,2,3]; [0,1,0,1] -> [0,0,1,1]; [0,0,1,1] -> [0,1,0,1]; [0,1,2,3] -> [0,0,0,0].
  CHECK(ReplicaGrouping(4, 4, 1).transpose().groups() == Groups{{0}, {1}, {2}, {3}});
  CHECK(ReplicaGrouping(4, 2, 2).transpose().groups() == Groups{{0, 1}, {2, 3}});
  CHECK(ReplicaGrouping(4, 2, 1).transpose().groups() == Groups{{0, 2}, {1, 3}});
  CHECK(ReplicaGrouping(4, 1, 1).transpose().groups() == Groups{{0, 1, 2, 3}});
  CHECK(ReplicaGrouping(16, 4, 1).transpose() == ReplicaGrouping(16, 4, 4));
  CHECK(ReplicaGrouping(16, 4, 4).transpose() == ReplicaGrouping(16, 4, 1));
  CHECK(ReplicaGrouping(16, 2, 8).transpose() == ReplicaGrouping(16, 8, 1));
}

TEST_CASE("grouping.retrieved replicas", "[grouping]") {
  CHECK(ReplicaGrouping(16, 4, 1).retrieved_replicas(RetrievalMode::OnePerGroup) == std::vector<int>{0, 4, 8, 12});
  CHECK(ReplicaGrouping(16, 4, 4).retrieved_replicas(RetrievalMode::OnePerGroup) == std::vector<int>{0, 1, 2, 3});
  CHECK(ReplicaGrouping(4).retrieved_replicas(RetrievalMode::OnePerGroup) == std::vector<int>{0});
  CHECK(ReplicaGrouping(4, 2, 2).retrieved_replicas(RetrievalMode::AllReplicas) == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("grouping.instances hosting a group, from every instance's range", "[grouping]") {
  // Non-uniform: instances drive [0,1), [1,4), [4,10), [10,16).
  const std::vector<ReplicaRange> ranges = {{0, 0, 1}, {1, 1, 3}, {2, 4, 6}, {3, 10, 6}};
  const ReplicaGrouping strided(16, 4, 4);
  CHECK(strided.instances_hosting(0, ranges) == std::vector<int>{0, 2, 3});  // 0, 4, 8, 12
  CHECK(strided.instances_hosting(1, ranges) == std::vector<int>{1, 2, 3});  // 1, 5, 9, 13
  const ReplicaGrouping blocks(16, 4, 1);
  CHECK(blocks.instances_hosting(0, ranges) == std::vector<int>{0, 1});  // 0..3
  CHECK(blocks.instances_hosting(3, ranges) == std::vector<int>{3});     // 12..15
  // The ranges may come in any order; the answer is ascending.
  const std::vector<ReplicaRange> shuffled = {ranges[3], ranges[1], ranges[0], ranges[2]};
  CHECK(strided.instances_hosting(0, shuffled) == std::vector<int>{0, 2, 3});
}

TEST_CASE("grouping.instances hosting a group, from a uniform topology", "[grouping]") {
  const auto topology = detect(lookup_in({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                          {"POPDIST_NUM_LOCAL_REPLICAS", "4"}}));
  CHECK(ReplicaGrouping(16, 4, 4).instances_hosting(1, topology) == std::vector<int>{0, 1, 2, 3});
  CHECK(ReplicaGrouping(16, 4, 1).instances_hosting(2, topology) == std::vector<int>{2});
  CHECK(ReplicaGrouping(16, 8, 1).instances_hosting(1, topology) == std::vector<int>{2, 3});
}

TEST_CASE("grouping.instances_hosting rejects a non-uniform or mismatched topology", "[grouping]") {
  const auto non_uniform = detect(lookup_in({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                                             {"POPDIST_NUM_TOTAL_REPLICAS", "3"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                                             {"POPDIST_REPLICA_INDEX_OFFSET", "1"}}));
  REQUIRE_FALSE(non_uniform.uniform_replicas_per_instance);
  CHECK_THROWS_WITH(ReplicaGrouping(3).instances_hosting(0, non_uniform), Catch::Contains("not uniform"));
  const auto uniform = detect(lookup_in({{"POPDIST_NUM_TOTAL_REPLICAS", "8"}}));
  CHECK_THROWS_WITH(ReplicaGrouping(16).instances_hosting(0, uniform),
                    Catch::Contains("replication_factor=16") && Catch::Contains("num_total_replicas=8"));
}

TEST_CASE("grouping.bad arguments are UsageErrors naming them", "[grouping]") {
  const auto rejects = [](int replicas, int group_size, int stride, const std::string& fragment) {
    INFO(replicas << ", " << group_size << ", " << stride);
    try {
      const ReplicaGrouping grouping(replicas, group_size, stride);
      FAIL("accepted");
    } catch (const UsageError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK(message.find("replication_factor=" + std::to_string(replicas)) != std::string::npos);
      CHECK(message.find("group_size=" + std::to_string(group_size)) != std::string::npos);
      CHECK(message.find("stride=" + std::to_string(stride)) != std::string::npos);
      CHECK(message.find(fragment) != std::string::npos);
    }
  };
  rejects(0, 1, 1, "replication_factor must be >= 1");
  rejects(-4, 1, 1, "replication_factor must be >= 1");
  rejects(4, 0, 1, "group_size must be >= 1");
  rejects(4, 2, 0, "stride must be >= 1");
  rejects(4, 2, -2, "stride must be >= 1");
  rejects(16, 3, 1, "divisible by group_size (16 % 3 = 1)");
  rejects(4, 8, 1, "divisible by group_size");
  rejects(16, 4, 2, "stride x group_size must equal replication_factor (2 x 4 = 8, not 16)");
  rejects(8, 2, 2, "stride x group_size must equal replication_factor");
  rejects(16, 1, 4, "4 x 1 = 4, not 16");
}

TEST_CASE("grouping.PopXL's stride-first form: group_size defaults to replication_factor / stride", "[grouping]") {
  // ir.replica_grouping(stride=1, group_size=None): the stride alone gives replication_factor /
  // stride groups-worth of members, i.e. `stride` groups.
  CHECK(ReplicaGrouping::with_stride(16, 4) == ReplicaGrouping(16, 4, 4));
  CHECK(ReplicaGrouping::with_stride(16, 4).groups() == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(ReplicaGrouping::with_stride(16) == ReplicaGrouping(16));
  CHECK(ReplicaGrouping::with_stride(16, 16) == ReplicaGrouping(16, 1, 1));
  CHECK(ReplicaGrouping::with_stride(8, 1, 2) == ReplicaGrouping(8, 2, 1));
  CHECK(ReplicaGrouping::with_stride(8, 2, 4) == ReplicaGrouping(8, 4, 2));
  // PopXL's documented examples for 8 replicas: (stride, group_size) -> assignment.
  CHECK(ReplicaGrouping::with_stride(8, 1, 2).assignment() == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(ReplicaGrouping::with_stride(8, 1, 4).assignment() == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(ReplicaGrouping::with_stride(8, 2, 4).assignment() == std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1});
  CHECK(ReplicaGrouping::with_stride(8, 4, 2).assignment() == std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK_THROWS_WITH(ReplicaGrouping::with_stride(16, 3),
                    Catch::Contains("stride=3") && Catch::Contains("stride must divide replication_factor (16 % 3 = 1)"));
  CHECK_THROWS_WITH(ReplicaGrouping::with_stride(16, 0), Catch::Contains("stride must be >= 1"));
  CHECK_THROWS_WITH(ReplicaGrouping::with_stride(0, 1), Catch::Contains("replication_factor must be >= 1"));
  CHECK_THROWS_WITH(ReplicaGrouping::with_stride(16, 2, 4), Catch::Contains("2 x 4 = 8, not 16"));
}

TEST_CASE("grouping.groups of one replica are the same partition whatever the stride", "[grouping]") {
  const ReplicaGrouping strided(8, 1, 8);  // PopXL accepts it: 8 x 1 == 8
  CHECK(strided.stride() == 1);
  CHECK(strided == ReplicaGrouping(8, 1, 1));
  CHECK(strided.groups() == ReplicaGrouping(8, 1, 1).groups());
  CHECK(strided.transpose() == ReplicaGrouping(8));
}

TEST_CASE("grouping.out-of-range replicas and groups are UsageErrors", "[grouping]") {
  const ReplicaGrouping grouping(16, 4, 4);
  CHECK_THROWS_WITH(grouping.group_of(16), Catch::Contains("replica=16") && Catch::Contains("0..15"));
  CHECK_THROWS_WITH(grouping.group_of(-1), Catch::Contains("replica=-1"));
  CHECK_THROWS_WITH(grouping.members(4), Catch::Contains("group=4") && Catch::Contains("0..3"));
  CHECK_THROWS_AS(grouping.members(-1), UsageError);
  CHECK_THROWS_AS(grouping.instances_hosting(7, std::vector<ReplicaRange>{}), UsageError);
}

}  // namespace popdist::testing
