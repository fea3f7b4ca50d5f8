// How an attempt ended once mpirun ended by itself (run/supervise/attempt_end.hpp): mpirun's
// status against what the agents said, after mpirun's failure and after its 0, with
// --host-timeout on and off. Pure.
#include <catch2/catch.hpp>

#include "liveness_support.hpp"
#include "run/supervise/attempt_end.hpp"
#include "run/supervise/watch.hpp"

using namespace popdist::cli;
using namespace liveness_support;
using std::chrono::milliseconds;

namespace {

const milliseconds kOff{0};
const milliseconds kTenSeconds{10000};

/// h1's instances ended with `status` 2 s ago; h2's never said, silent for 3 s (before that end).
Hearing h2_gone_before_h1_ended(int status) {
  auto hearing = two_hosts(milliseconds(3000));
  hearing.records[0] = ended(hearing.records[0], status, milliseconds(2000));
  hearing.records[1] = ended(hearing.records[1], status, milliseconds(2000));
  return hearing;
}

}  // namespace

TEST_CASE("attempt end, mpirun failed: a host gone before the first end makes it 122", "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  const auto end = judge_attempt_end(1, plan, h2_gone_before_h1_ended(143), kTenSeconds);
  CHECK(end.status == kLostHostStatus);
  REQUIRE(end.lost.size() == 1);
  CHECK(end.lost[0].host == "h2");
  CHECK(end.unreported.empty());
}

TEST_CASE("attempt end, mpirun failed, --host-timeout 0: mpirun's status stands", "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  const auto end = judge_attempt_end(1, plan, h2_gone_before_h1_ended(143), kOff);
  CHECK(end.status == 1);
  CHECK(end.lost.empty());
  // mpirun's own failure is the report's subject; the silent are named as the teardown's
  REQUIRE(end.unreported.size() == 2);
  CHECK((end.unreported[0].index == 2 && end.unreported[0].host == "h2" && end.unreported[0].in_teardown));
  CHECK((end.unreported[1].index == 3 && end.unreported[1].in_teardown));
}

TEST_CASE("attempt end, mpirun failed: a teardown that silenced a host after the failure stands", "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = h2_gone_before_h1_ended(3);
  hearing.heard["n2"] = kNow - milliseconds(1000);
  const auto end = judge_attempt_end(3, plan, hearing, kTenSeconds);
  CHECK(end.status == 3);
  CHECK(end.lost.empty());
}

TEST_CASE("attempt end, mpirun said 0: every instance said 0, it stands", "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = two_hosts(milliseconds(100));
  for (auto& record : hearing.records) record = ended(record, 0, milliseconds(200));
  for (const auto limit : {kTenSeconds, kOff}) {
    const auto end = judge_attempt_end(0, plan, hearing, limit);
    CHECK(end.status == 0);
    CHECK(end.lost.empty());
    CHECK(end.unreported.empty());
  }
  // An agent that never spoke (no channel reached) is mpirun's to report, not a contradiction.
  hearing.records[3] = InstanceRecord{};
  hearing.records[3].index = 3;
  CHECK(judge_attempt_end(0, plan, hearing, kTenSeconds).status == 0);
}

TEST_CASE("attempt end, mpirun said 0: a host gone before the first end makes it 122", "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  const auto end = judge_attempt_end(0, plan, h2_gone_before_h1_ended(0), kTenSeconds);
  CHECK(end.status == kLostHostStatus);
  REQUIRE(end.lost.size() == 1);
  CHECK(end.lost[0].instances == std::vector<int>{2, 3});
  CHECK(end.unreported.empty());
}

TEST_CASE("attempt end, mpirun said 0, --host-timeout 0: instances that never said fail it (1)", "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  const auto end = judge_attempt_end(0, plan, h2_gone_before_h1_ended(0), kOff);
  CHECK(end.status == 1);
  CHECK(end.lost.empty());
  REQUIRE(end.unreported.size() == 2);
  CHECK(end.unreported[0].index == 2);
  CHECK(end.unreported[0].host == "h2");
  CHECK(end.unreported[1].index == 3);
}

TEST_CASE("attempt end, mpirun said 0: a host heard after the first end that never said fails it (1)",
          "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = h2_gone_before_h1_ended(0);
  hearing.heard["n2"] = kNow - milliseconds(1000);  // not lost: heard after h1's end
  hearing.records[2] = ended(hearing.records[2], 0, milliseconds(900));
  const auto end = judge_attempt_end(0, plan, hearing, kTenSeconds);
  CHECK(end.status == 1);
  CHECK(end.lost.empty());
  REQUIRE(end.unreported.size() == 1);
  CHECK(end.unreported[0].index == 3);
}

TEST_CASE("attempt end, mpirun said 0: an instance that failed makes it 1, timeout on or off", "[attempt_end]") {
  const auto plan = plan_launch(4, 4, 1, hosts(2));
  auto hearing = two_hosts(milliseconds(100));
  for (auto& record : hearing.records) record = ended(record, 0, milliseconds(200));
  hearing.records[2].status = 143;  // Slurm's --no-kill stopped it; mpirun still said 0
  for (const auto limit : {kTenSeconds, kOff}) {
    const auto end = judge_attempt_end(0, plan, hearing, limit);
    CHECK(end.status == 1);
    CHECK(end.unreported.empty());
  }
}
