// torchrun's MASTER_ADDR / MASTER_PORT for `popdist run` (master_endpoint.hpp): who wins, what a
// multi-host job gets when the first host resolves to loopback or not at all, and the errors.
// The machine's network is injected, so these rules are tested without one.
#include <catch2/catch.hpp>

#include "job/launch_plan.hpp"
#include "popdist/error.hpp"
#include "run/plan/master_endpoint.hpp"

using popdist::lookup_in;
using popdist::UsageError;
using popdist::cli::choose_master;
using popdist::cli::HostSpec;
using popdist::cli::MachineNetwork;
using popdist::cli::plan_launch;
using popdist::cli::RunOptions;

namespace {

// The fake machine: "node0" resolves to 10.0.0.5, "self" to Debian's 127.0.1.1, nothing else.
std::optional<std::string> fake_resolve(const std::string& name) {
  if (name == "node0") return "10.0.0.5";
  if (name == "self") return "127.0.1.1";
  return std::nullopt;
}
std::optional<std::string> fake_outward() { return "192.168.1.7"; }
std::optional<std::string> no_outward() { return std::nullopt; }
int fake_free_port() { return 40123; }

const MachineNetwork network{fake_resolve, fake_outward, fake_free_port};

popdist::cli::LaunchPlan two_hosts(const std::string& first) {
  return plan_launch(2, 2, 1, {HostSpec{first, std::nullopt}, HostSpec{"other", std::nullopt}});
}

}  // namespace

TEST_CASE("one host: loopback and a port free on this machine") {
  const auto endpoint = choose_master(plan_launch(2, 2, 1, {}), RunOptions{}, lookup_in({}), network);
  CHECK(endpoint.address == "127.0.0.1");
  CHECK(endpoint.port == 40123);
  CHECK_THAT(endpoint.decision, Catch::Contains("MASTER_ADDR=127.0.0.1") && Catch::Contains("MASTER_PORT=40123"));
}

TEST_CASE("several hosts: the first host's address as this machine resolves it") {
  CHECK(choose_master(two_hosts("node0"), RunOptions{}, lookup_in({}), network).address == "10.0.0.5");
}

TEST_CASE("several hosts: a first host that is loopback or unresolvable is this machine's outward address") {
  CHECK(choose_master(two_hosts("self"), RunOptions{}, lookup_in({}), network).address == "192.168.1.7");
  const auto endpoint = choose_master(two_hosts("hostA"), RunOptions{}, lookup_in({}), network);
  CHECK(endpoint.address == "192.168.1.7");
  CHECK_THAT(endpoint.decision, Catch::Contains("hostA does not resolve"));
  const MachineNetwork isolated{fake_resolve, no_outward, fake_free_port};
  CHECK_THROWS_WITH(choose_master(two_hosts("hostA"), RunOptions{}, lookup_in({}), isolated),
                    Catch::Contains("hostA") && Catch::Contains("--master-addr"));
}

TEST_CASE("the user's MASTER_ADDR / MASTER_PORT win over the defaults, the options over both") {
  const auto env = lookup_in({{"MASTER_ADDR", "10.9.9.9"}, {"MASTER_PORT", "29500"}});
  auto endpoint = choose_master(two_hosts("node0"), RunOptions{}, env, network);
  CHECK(endpoint.address == "10.9.9.9");
  CHECK(endpoint.port == 29500);
  RunOptions options;
  options.master_addr = "10.1.1.1";
  options.master_port = 1234;
  endpoint = choose_master(two_hosts("node0"), options, env, network);
  CHECK(endpoint.address == "10.1.1.1");
  CHECK(endpoint.port == 1234);
  CHECK_THAT(endpoint.decision, Catch::Contains("--master-addr") && Catch::Contains("--master-port"));
}

TEST_CASE("a MASTER_PORT that is not a port, or an empty --master-addr, is a usage error naming it") {
  for (const char* bad : {"abc", "0", "65536", "80x", "-1"}) {
    CHECK_THROWS_AS(choose_master(plan_launch(1, 1, 1, {}), RunOptions{}, lookup_in({{"MASTER_PORT", bad}}), network),
                    UsageError);
    CHECK_THROWS_WITH(choose_master(plan_launch(1, 1, 1, {}), RunOptions{}, lookup_in({{"MASTER_PORT", bad}}), network),
                      Catch::Contains("MASTER_PORT '" + std::string(bad) + "'") && Catch::Contains("1..65535"));
  }
  RunOptions options;
  options.master_addr = "";
  CHECK_THROWS_WITH(choose_master(plan_launch(1, 1, 1, {}), options, lookup_in({}), network),
                    Catch::Contains("--master-addr"));
}
