// The plan as each instance's agent sees it: four counts, and every instance's own variables
// derived from its rank, the same as the full plan gives (exhaustively over small jobs).
#include <catch2/catch.hpp>

#include "job/instance_plan.hpp"
#include "popdist/error.hpp"

using popdist::cli::plan_argument;
using popdist::cli::plan_from_argument;

TEST_CASE("every instance's variables from the four counts equal the full plan's", "[plan]") {
  for (int hosts = 1; hosts <= 4; ++hosts) {
    for (int instances = hosts; instances <= 12; instances += hosts) {
      for (int per_instance : {1, 2, 3}) {
        std::vector<popdist::cli::HostSpec> names;
        for (int h = 0; h < hosts; ++h) names.push_back({"n" + std::to_string(h), std::nullopt});
        const auto full = popdist::cli::plan_launch(instances, instances * per_instance, 2, names);
        const auto derived = plan_from_argument(plan_argument(full));
        for (int i = 0; i < instances; ++i) {
          INFO(hosts << " hosts, " << instances << " instances, instance " << i);
          auto expected = popdist::cli::popdist_variables(full, i);
          for (const auto& pair : popdist::cli::torchrun_variables(full, i, "", 0)) {
            if (pair.first != "MASTER_ADDR" && pair.first != "MASTER_PORT") expected.push_back(pair);
          }
          CHECK(popdist::cli::instance_variables(derived, i) == expected);
        }
      }
    }
  }
}

TEST_CASE("torchrun's identity per instance: RANK, LOCAL_RANK, GROUP_RANK by host", "[plan]") {
  const auto plan = plan_from_argument("4,4,1,2");
  const auto variables = popdist::cli::instance_variables(plan, 3);
  auto value = [&](const std::string& name) {
    for (const auto& [n, v] : variables) {
      if (n == name) return v;
    }
    return std::string("(absent)");
  };
  CHECK(value("RANK") == "3");
  CHECK(value("WORLD_SIZE") == "4");
  CHECK(value("LOCAL_RANK") == "1");
  CHECK(value("LOCAL_WORLD_SIZE") == "2");
  CHECK(value("GROUP_RANK") == "1");
  CHECK(value("GROUP_WORLD_SIZE") == "2");
  CHECK(value("POPDIST_LOCAL_INSTANCE_INDEX") == "1");
  CHECK(value("MASTER_ADDR") == "(absent)");
}

TEST_CASE("a bad --plan names the option and the value", "[plan]") {
  for (const std::string bad : {"", "4", "4,4,1", "4,4,1,1,1", "4,6,1,1", "4,4,1,3", "0,0,1,1", "4,4,-1,1", "a,b,c,d",
                                "4,4,1,1,", ",4,4,1,1", "4,4,1,1x"}) {
    INFO(bad);
    CHECK_THROWS_WITH(plan_from_argument(bad), Catch::Matchers::Contains("--plan") &&
                                                   Catch::Matchers::Contains("expected instances,replicas"));
  }
}

TEST_CASE("OMP_NUM_THREADS: the host's cores divided among its instances, at least 1", "[plan]") {
  using popdist::cli::default_omp_threads;
  CHECK(default_omp_threads(64, 2) == 32);
  CHECK(default_omp_threads(64, 3) == 21);
  CHECK(default_omp_threads(2, 2) == 1);
  CHECK(default_omp_threads(2, 4) == 1);
  CHECK(default_omp_threads(1, 1) == 1);
  CHECK(default_omp_threads(8, 0) == 8);
}
