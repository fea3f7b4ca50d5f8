// The watches over mpirun (run/supervise/watch.hpp) and their verdicts: the lost-host watch over
// an attempt's records (the one rule, --host-timeout 0 included) and the stall watch. The hung
// teardown's is in test_process_runner.cpp (it needs a real process's zombies).
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "job/launch_plan.hpp"
#include "liveness_support.hpp"
#include "run/supervise/job_records.hpp"
#include "run/supervise/lost_host_watch.hpp"
#include "run/supervise/stall_watch.hpp"

using namespace popdist::cli;
using std::chrono::milliseconds;
namespace channel = popdist::cli::channel;

namespace {

using Clock = std::chrono::steady_clock;

/// Two hosts' records: h1's agents (relay n1) heard now, h2's (relay n2) `n2_silent` ago.
void started_on_two_hosts(JobRecords& records, milliseconds n2_silent) {
  const auto now = Clock::now();
  records.on_delivery({"n1", now, channel::Started{0, 10}});
  records.on_delivery({"n1", now, channel::Started{1, 11}});
  records.on_delivery({"n2", now - n2_silent, channel::Started{2, 12}});
  records.on_delivery({"n2", now - n2_silent, channel::Started{3, 13}});
}

}  // namespace

TEST_CASE("lost-host watch: a host silent for --host-timeout ends the attempt, naming it", "[watches]") {
  const auto plan = plan_launch(4, 4, 1, liveness_support::hosts(2));
  JobRecords records(4);
  started_on_two_hosts(records, milliseconds(5000));
  const auto verdict = lost_host_watch(plan, records, 2, milliseconds(3000))(0);
  REQUIRE(verdict);
  CHECK(verdict->status == kLostHostStatus);
  CHECK(verdict->ending == WatchVerdict::Ending::sigterm_then_sigkill);
  CHECK(verdict->grace == milliseconds(3000));
  REQUIRE(verdict->lost.size() == 1);
  CHECK(verdict->lost[0].host == "h2");
  CHECK(verdict->lost[0].instances == std::vector<int>{2, 3});
  // heard within the limit: nothing to say
  CHECK_FALSE(lost_host_watch(plan, records, 10, milliseconds(3000))(0));
}

TEST_CASE("lost-host watch, --host-timeout 0: silent for ever, never lost", "[watches]") {
  const auto plan = plan_launch(4, 4, 1, liveness_support::hosts(2));
  JobRecords records(4);
  started_on_two_hosts(records, milliseconds(3'600'000));
  CHECK_FALSE(lost_host_watch(plan, records, 0, milliseconds(3000))(0));
}

TEST_CASE("stall watch: after the limit without output, the report, then SIGTERM and 125", "[watches]") {
  int reports = 0;
  const auto long_ago = [] { return std::optional<Clock::time_point>(Clock::now() - std::chrono::hours(1)); };
  auto watch = stall_watch(StallWatch(long_ago, milliseconds(50)), [&reports] { ++reports; }, false);
  CHECK_FALSE(watch(0));  // counted from the watch's start, not from the old output
  std::this_thread::sleep_for(milliseconds(80));
  const auto verdict = watch(0);
  REQUIRE(verdict);
  CHECK(verdict->status == kStallStatus);
  CHECK(verdict->ending == WatchVerdict::Ending::sigterm);
  CHECK(verdict->lost.empty());
  CHECK(reports == 1);
}

TEST_CASE("stall watch, --stall-keep-running: the report, no verdict, and the limit counts again", "[watches]") {
  int reports = 0;
  const auto none = [] { return std::optional<Clock::time_point>(); };
  auto watch = stall_watch(StallWatch(none, milliseconds(50)), [&reports] { ++reports; }, true);
  std::this_thread::sleep_for(milliseconds(80));
  CHECK_FALSE(watch(0));
  CHECK(reports == 1);
  CHECK_FALSE(watch(0));  // restarted: not stalled again at once
  CHECK(reports == 1);
}

TEST_CASE("stall watch: fresh output keeps it quiet", "[watches]") {
  int reports = 0;
  const auto just_now = [] { return std::optional<Clock::time_point>(Clock::now()); };
  auto watch = stall_watch(StallWatch(just_now, milliseconds(50)), [&reports] { ++reports; }, false);
  std::this_thread::sleep_for(milliseconds(80));
  CHECK_FALSE(watch(0));
  CHECK(reports == 0);
}
