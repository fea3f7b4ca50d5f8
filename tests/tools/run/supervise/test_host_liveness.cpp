// Which hosts are lost (run/supervise/host_liveness.hpp), the one decision: pure, the records, the
// clock and the limit in, at each moment (mpirun running, mpirun ended) with --host-timeout on
// and off.
#include <catch2/catch.hpp>

#include "liveness_support.hpp"

using namespace popdist::cli;
using namespace liveness_support;
using std::chrono::milliseconds;

namespace {
const milliseconds kOff{0};
const milliseconds kTenSeconds{10000};
}  // namespace

TEST_CASE("lost_hosts, mpirun running: a host silent for the limit is lost", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = two_hosts(milliseconds(10500));
  const auto lost = lost_hosts(Moment::mpirun_running, plan, hearing, kTenSeconds);
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].host == "h2");
  CHECK(lost[0].instances == std::vector<int>{2, 3});
  CHECK(lost[0].silent == milliseconds(10500));
  CHECK(describe_lost(lost) == "h2 (instances 2, 3; last heard 10.5 s ago)");
  CHECK(lost_hosts(Moment::mpirun_running, plan, hearing, milliseconds(11000)).empty());
  // A host whose instances all ended is silent by right.
  hearing.records[2] = ended(hearing.records[2], 0, milliseconds(20000));
  hearing.records[3] = ended(hearing.records[3], 1, milliseconds(20000));
  CHECK(lost_hosts(Moment::mpirun_running, plan, hearing, kTenSeconds).empty());
}

TEST_CASE("lost_hosts, mpirun running: a host never heard from is not watched", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  Hearing hearing{{running(0, "n1"), running(1, "n1"), InstanceRecord{}, InstanceRecord{}},
                  {{"n1", kNow - milliseconds(500)}},
                  kNow};
  hearing.records[2].index = 2;
  hearing.records[3].index = 3;
  const auto lost = lost_hosts(Moment::mpirun_running, plan, hearing, milliseconds(1));
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].host == "h1");  // silent for 0.5 s > 1 ms; h2 (its start is mpirun's to report) never counts
}

TEST_CASE("lost_hosts, mpirun running, --host-timeout 0: no host is ever lost", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  CHECK(lost_hosts(Moment::mpirun_running, plan, two_hosts(std::chrono::hours(1)), kOff).empty());
}

TEST_CASE("lost_hosts, mpirun ended: only hosts silent since before the first end", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = two_hosts(milliseconds(3000));
  hearing.records[0] = ended(hearing.records[0], 143, milliseconds(2000));
  hearing.records[1] = ended(hearing.records[1], 143, milliseconds(1900));
  // n2's daemon died before mpirun tore h1 down: lost, however short the limit's wait.
  auto lost = lost_hosts(Moment::mpirun_ended, plan, hearing, kTenSeconds);
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].host == "h2");
  CHECK(lost[0].silent == milliseconds(3000));
  // A program failed on h1 first and the teardown then silenced n2: not lost.
  hearing.heard["n2"] = kNow - milliseconds(1500);
  CHECK(lost_hosts(Moment::mpirun_ended, plan, hearing, kTenSeconds).empty());
}

TEST_CASE("lost_hosts, mpirun ended: with no end at all, every watched host that did not end", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = two_hosts(milliseconds(10));
  hearing.records[0] = ended(hearing.records[0], 0, milliseconds(50));
  hearing.records[1] = ended(hearing.records[1], 0, milliseconds(50));
  // h2 was heard after h1's instances ended: not lost.
  CHECK(lost_hosts(Moment::mpirun_ended, plan, hearing, kTenSeconds).empty());
  const auto none_ended = two_hosts(milliseconds(100));
  CHECK(lost_hosts(Moment::mpirun_ended, plan, none_ended, kTenSeconds).size() == 2);
}

TEST_CASE("lost_hosts, mpirun ended, --host-timeout 0: no host is ever lost", "[liveness]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = two_hosts(milliseconds(3000));
  hearing.records[0] = ended(hearing.records[0], 143, milliseconds(2000));
  CHECK(lost_hosts(Moment::mpirun_ended, plan, hearing, kOff).empty());
  CHECK(lost_hosts(Moment::mpirun_ended, plan, two_hosts(milliseconds(100)), kOff).empty());
}

TEST_CASE("host_timeout_limit: seconds to the limit, 0 off", "[liveness]") {
  CHECK(host_timeout_limit(10) == milliseconds(10000));
  CHECK(host_timeout_limit(0.25) == milliseconds(250));
  CHECK(host_timeout_limit(0) == milliseconds(0));
}
