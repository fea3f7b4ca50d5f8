// Slurm's word on a failed srun job's nodes (run/report/slurm_nodes.hpp): sinfo's lines read, the
// nodes out of service picked, and the report's line for each.
#include <catch2/catch.hpp>

#include "run/report/slurm_nodes.hpp"

using namespace popdist::cli;

TEST_CASE("slurm nodes: sinfo's %N|%T|%E lines read, a node of two partitions once", "[slurm_nodes]") {
  const auto nodes = parse_slurm_nodes("n1|idle|none\nn2|down*|Not responding\nn2|down*|Not responding\nnoise\n|x|y\n");
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].name == "n1");
  CHECK(nodes[0].state == "idle");
  CHECK(nodes[0].reason.empty());
  CHECK(nodes[1].name == "n2");
  CHECK(nodes[1].reason == "Not responding");
  CHECK(parse_slurm_nodes("").empty());
}

TEST_CASE("slurm nodes: down, failing, draining or not responding are out of service", "[slurm_nodes]") {
  for (const std::string state : {"down", "down*", "drained", "draining", "drain", "fail", "failing", "idle*"}) {
    INFO(state);
    CHECK(out_of_service({"n", state, ""}));
  }
  for (const std::string state : {"idle", "allocated", "mixed", "completing"}) {
    INFO(state);
    CHECK_FALSE(out_of_service({"n", state, ""}));
  }
}

TEST_CASE("slurm nodes: the report names each node out of service, its state and Slurm's reason", "[slurm_nodes]") {
  const auto text = slurm_nodes_report({{"n1", "allocated", ""}, {"n2", "down*", "test"}, {"n3", "drained", ""}});
  CHECK(text ==
        "  Slurm took node n2 out of service: DOWN, not responding, reason \"test\" (sinfo; Slurm ended the job's step "
        "there)\n"
        "  Slurm took node n3 out of service: DRAINED (sinfo; Slurm ended the job's step there)\n");
  CHECK(slurm_nodes_report({{"n1", "mixed", ""}}).empty());
}
