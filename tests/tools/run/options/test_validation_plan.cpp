// Validation messages and PopRun's even division of instances and replicas.
#include <catch2/catch.hpp>

#include "job/launch_plan.hpp"
#include "popdist/error.hpp"
#include "run/options/validation.hpp"

using Catch::Matchers::Contains;
using popdist::cli::HostSpec;
using popdist::cli::RunOptions;
using popdist::cli::validate_hosts;
using popdist::cli::validate_options;

namespace {
RunOptions with_program() {
  RunOptions options;
  options.program = {"true"};
  return options;
}
}  // namespace

TEST_CASE("validate_options accepts PopRun's defaults and divisible counts", "[validation]") {
  CHECK_NOTHROW(validate_options(with_program()));
  auto options = with_program();
  options.num_instances = 4;
  options.num_replicas = 8;
  options.ipus_per_replica = 2;
  options.only_output_from_instance = 3;
  CHECK_NOTHROW(validate_options(options));
}

TEST_CASE("validate_options: each bad value names the option and the value", "[validation]") {
  auto options = with_program();
  SECTION("counts < 1") {
    options.num_instances = 0;
    CHECK_THROWS_WITH(validate_options(options), "--num-instances 0: expected a whole number from 1 to 65536");
    options.num_instances = 1;
    options.num_replicas = -2;
    CHECK_THROWS_WITH(validate_options(options), "--num-replicas -2: expected a whole number from 1 to 1048576");
    options.num_replicas = 1;
    options.ipus_per_replica = 0;
    CHECK_THROWS_WITH(validate_options(options), "--ipus-per-replica 0: expected a whole number from 1 to 1024");
  }
  SECTION("--num-replicas defaults to one per instance") {
    options.num_instances = 4;
    CHECK_NOTHROW(validate_options(options));
    CHECK(popdist::cli::total_replicas(options) == 4);
  }
  SECTION("replicas not divisible by instances") {
    options.num_instances = 4;
    options.num_replicas = 6;
    CHECK_THROWS_WITH(validate_options(options), Contains("--num-replicas 6 is not divisible by --num-instances 4") &&
                                                     Contains("--num-replicas 8"));
    options.num_replicas = 2;  // fewer replicas than instances
    CHECK_THROWS_WITH(validate_options(options), Contains("--num-replicas 2 is not divisible by --num-instances 4"));
  }
  SECTION("an instance's IPUs must be 1 or a power of two") {
    options.num_instances = 2;
    options.num_replicas = 6;
    CHECK_THROWS_WITH(validate_options(options),
                      Contains("each instance would drive 3 replicas x 1 IPUs per replica = 3 IPUs, which is not 1 or a "
                               "power of two"));
    options.num_replicas = 4;
    options.ipus_per_replica = 3;
    CHECK_THROWS_WITH(validate_options(options), Contains("2 replicas x 3 IPUs per replica = 6 IPUs"));
    options.ipus_per_replica = 4;
    CHECK_NOTHROW(validate_options(options));
  }
  SECTION("the largest job is accepted, without overflow in the suggestion for the next") {
    options.num_instances = 4096;
    options.num_replicas = 1 << 20;
    options.ipus_per_replica = 1024;
    CHECK_NOTHROW(validate_options(options));
    options.num_replicas = (1 << 20) - 1;
    CHECK_THROWS_WITH(validate_options(options), Contains("(e.g. --num-replicas 1048576)"));
    options.num_replicas = (1 << 20) + 1;
    CHECK_THROWS_WITH(validate_options(options), Contains("from 1 to 1048576"));
  }
  SECTION("--host with --hostfile") {
    options.host_lists = {"a"};
    options.hostfile = "hosts.txt";
    CHECK_THROWS_WITH(validate_options(options), Contains("--host and --hostfile 'hosts.txt' are mutually exclusive"));
  }
  SECTION("no program") {
    options.program.clear();
    CHECK_THROWS_WITH(validate_options(options), Contains("no program to run: give it after the options"));
  }
  SECTION("--only-output-from-instance out of range") {
    options.num_instances = 2;
    options.num_replicas = 2;
    options.only_output_from_instance = 2;
    CHECK_THROWS_WITH(validate_options(options), "--only-output-from-instance 2: out of range; the instances are 0..1");
    options.only_output_from_instance = -1;
    CHECK_THROWS_WITH(validate_options(options), Contains("--only-output-from-instance -1: out of range"));
  }
}

TEST_CASE("validate_hosts: instances divisible by hosts, each host once", "[validation]") {
  auto options = with_program();
  options.num_instances = 4;
  options.num_replicas = 4;
  CHECK_NOTHROW(validate_hosts(options, {}, "this machine"));
  CHECK_NOTHROW(validate_hosts(options, {{"a", {}}, {"b", {}}}, "--host"));
  CHECK_NOTHROW(validate_hosts(options, {{"a", {}}, {"b", {}}, {"c", {}}, {"d", {}}}, "--host"));
  CHECK_THROWS_WITH(validate_hosts(options, {{"a", {}}, {"b", {}}, {"c", {}}}, "--host"),
                    "--num-instances 4 is not divisible by the 3 hosts of --host (a, b, c): instances are divided "
                    "evenly among the hosts");
  options.num_instances = 1;
  options.num_replicas = 1;
  CHECK_THROWS_WITH(validate_hosts(options, {{"n1", 3}, {"n2", 1}}, "SLURM_JOB_NODELIST"),
                    Contains("--num-instances 1 is not divisible by the 2 hosts of SLURM_JOB_NODELIST (n1, n2)"));
  CHECK_THROWS_WITH(validate_hosts(options, {{"a", {}}, {"a", {}}}, "--host"), Contains("host 'a' is listed more than once"));
}

TEST_CASE("plan_launch: instance i on host i / (instances/hosts), replicas in blocks", "[plan]") {
  for (const int hosts : {1, 2, 4}) {
    for (const int instances : {4, 8}) {
      for (const int replicas_per_instance : {1, 2, 3}) {
        std::vector<HostSpec> host_specs;
        for (int h = 0; h < hosts; ++h) host_specs.push_back({"h" + std::to_string(h), {}});
        const auto plan = popdist::cli::plan_launch(instances, instances * replicas_per_instance, 2, host_specs);
        REQUIRE(plan.instances.size() == static_cast<std::size_t>(instances));
        REQUIRE(plan.hosts.size() == static_cast<std::size_t>(hosts));
        CHECK(plan.replicas_per_instance == replicas_per_instance);
        const int per_host = instances / hosts;
        int next_replica = 0;
        for (const auto& instance : plan.instances) {
          CHECK(instance.host == instance.index / per_host);
          CHECK(instance.local_index == instance.index % per_host);
          CHECK(instance.replica_offset == next_replica);  // the replica ranges tile 0..total-1
          next_replica += plan.replicas_per_instance;
        }
        CHECK(next_replica == plan.num_total_replicas);
        for (const auto& host : plan.hosts) CHECK(host.num_instances == per_host);
      }
    }
  }
}

TEST_CASE("plan_launch without hosts: this machine, no explicit --host", "[plan]") {
  const auto plan = popdist::cli::plan_launch(2, 8, 2, {});
  CHECK_FALSE(plan.explicit_hosts);
  REQUIRE(plan.hosts.size() == 1);
  CHECK(plan.hosts[0].name == "localhost");
  CHECK(plan.hosts[0].num_instances == 2);
  using Vars = std::vector<std::pair<std::string, std::string>>;
  CHECK(popdist::cli::popdist_variables(plan, 1) == Vars{{"POPDIST_NUM_TOTAL_REPLICAS", "8"},
                                                         {"POPDIST_NUM_LOCAL_REPLICAS", "4"},
                                                         {"POPDIST_REPLICA_INDEX_OFFSET", "4"},
                                                         {"POPDIST_NUM_IPUS_PER_REPLICA", "2"},
                                                         {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"},
                                                         {"POPDIST_LOCAL_INSTANCE_INDEX", "1"}});
}
