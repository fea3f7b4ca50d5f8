// Which hosts are lost (run/supervise/host_liveness.hpp): pure, the records and the clock in.
#include <catch2/catch.hpp>

#include "job/launch_plan.hpp"
#include "run/supervise/host_liveness.hpp"

using Catch::Matchers::Contains;
using namespace popdist::cli;
using std::chrono::milliseconds;

namespace {

using Clock = std::chrono::steady_clock;

InstanceRecord running(int index, const std::string& host) {
  InstanceRecord record;
  record.index = index;
  record.host = host;
  record.started = true;
  return record;
}

/// h1, h2, ... without --host slots.
std::vector<HostSpec> hosts(int count) {
  std::vector<HostSpec> specs;
  for (int i = 1; i <= count; ++i) specs.push_back({"h" + std::to_string(i), std::nullopt});
  return specs;
}

}  // namespace

TEST_CASE("silent_hosts: a host is lost when its running instances' host is silent for the limit", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  const auto now = Clock::time_point{} + std::chrono::hours(1);
  std::vector<InstanceRecord> records{running(0, "n1"), running(1, "n1"), running(2, "n2"), running(3, "n2")};
  std::map<std::string, SteadyTime> heard{{"n1", now - milliseconds(500)}, {"n2", now - milliseconds(10500)}};
  const auto lost = silent_hosts(plan, records, heard, now, milliseconds(10000));
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].host == "h2");
  CHECK(lost[0].instances == std::vector<int>{2, 3});
  CHECK(lost[0].silent == milliseconds(10500));
  CHECK(describe_lost(lost) == "h2 (instances 2, 3; last heard 10.5 s ago)");
  CHECK(silent_hosts(plan, records, heard, now, milliseconds(11000)).empty());
  // A host whose instances all ended is silent by right.
  records[2].status = 0;
  records[3].status = 1;
  CHECK(silent_hosts(plan, records, heard, now, milliseconds(10000)).empty());
  // A host never heard from is not yet lost (its start is mpirun's to report).
  std::vector<InstanceRecord> unheard{running(0, "n1"), running(1, "n1"), InstanceRecord{}, InstanceRecord{}};
  unheard[2].index = 2;
  unheard[3].index = 3;
  CHECK(silent_hosts(plan, unheard, heard, now, milliseconds(1)).size() == 1);
}

TEST_CASE("hosts_gone_before_the_end: only hosts silent before the first end", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  const auto now = Clock::time_point{} + std::chrono::hours(1);
  std::vector<InstanceRecord> records{running(0, "n1"), running(1, "n1"), running(2, "n2"), running(3, "n2")};
  records[0].status = 143;
  records[0].ended_at = now - milliseconds(2000);
  records[1].status = 143;
  records[1].ended_at = now - milliseconds(1900);
  // n2's daemon died before mpirun tore n1 down: lost.
  std::map<std::string, SteadyTime> heard{{"n1", now - milliseconds(1900)}, {"n2", now - milliseconds(3000)}};
  auto lost = hosts_gone_before_the_end(plan, records, heard, now);
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].host == "h2");
  // A program failed on n1 first and the teardown then silenced n2: not lost.
  heard["n2"] = now - milliseconds(1500);
  CHECK(hosts_gone_before_the_end(plan, records, heard, now).empty());
}
