// The failure report: statuses and signals by name with their likely meaning, torch's error
// file, the order of failures and the instances the teardown stopped.
#include <catch2/catch.hpp>

#include <chrono>

#include "run/report/failure_report.hpp"

using Catch::Matchers::Contains;
using popdist::cli::describe_status;
using popdist::cli::Failure;
using popdist::cli::failure_report;

TEST_CASE("statuses: exit codes, and signals by name with what they likely mean", "[report]") {
  CHECK(describe_status(3) == "exit code 3");
  CHECK(describe_status(128) == "exit code 128");
  CHECK_THAT(describe_status(137), Contains("SIGKILL (signal 9") && Contains("out-of-memory killer"));
  CHECK_THAT(describe_status(139), Contains("SIGSEGV (signal 11") && Contains("segmentation fault"));
  CHECK_THAT(describe_status(134), Contains("SIGABRT"));
  CHECK_THAT(describe_status(143), Contains("SIGTERM"));
  CHECK(describe_status(128 + 10) == "SIGUSR1 (signal 10)");
  CHECK(describe_status(255) == "exit code 255");
}

TEST_CASE("torch's error file: the traceback, else the message", "[report]") {
  const std::string written_by_record =
      R"({"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "Traceback (most recent call )"
      R"(last):\n  File \"t.py\", line 3, in <module>\nRuntimeError: boom \u00e9\"q\"\n", "timestamp": "1"}}})";
  CHECK(popdist::cli::torch_error_text(written_by_record) ==
        "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\nRuntimeError: boom ?\"q\"\n");
  CHECK(popdist::cli::torch_error_text(R"({"message": {"message": "ValueError: x", "extraInfo": {}}})") ==
        "ValueError: x");
  CHECK(popdist::cli::torch_error_text(R"({"message": "plain"})") == "plain");
  CHECK(popdist::cli::torch_error_text("").empty());
  CHECK(popdist::cli::torch_error_text("not json at all").empty());
}

TEST_CASE("the report: first failure first with its lines, the teardown's victims on one line", "[report]") {
  const long long start = 1'000'000'000'000;
  std::vector<Failure> failures{
      {{1, 139, start + 2'500'000'000, "hostB"}, "Fatal Python error: Segmentation fault\n", "stderr"},
      {{0, 143, start + 2'600'000'000, "hostA"}, "", "stderr"},
      {{3, 137, start + 8'000'000'000, "hostB"}, "", "stderr"},
  };
  const auto text = failure_report(failures, start, 1, 3, 139);
  CHECK_THAT(text, Contains("the job failed (SIGSEGV") && Contains("attempt 2 of 3"));
  CHECK_THAT(text, Contains("first failure: instance 1 on hostB: SIGSEGV (signal 11") &&
                       Contains("2.5 s after the start"));
  CHECK_THAT(text, Contains("its last error lines (stderr):\n    Fatal Python error: Segmentation fault\n"));
  CHECK_THAT(text, Contains("stopped by the job's teardown after the first failure: instance(s) 0, 3"));
  CHECK(text.find("instance 0 on hostA") == std::string::npos);
  // a second real failure (not a teardown signal) is listed in full
  failures[1].end.status = 2;
  CHECK_THAT(failure_report(failures, start, 0, 1, 139), Contains("  instance 0 on hostA: exit code 2"));
  CHECK(failure_report(failures, start, 0, 1, 139).find("attempt") == std::string::npos);
}

TEST_CASE("nothing recorded: the report says so and points to mpirun's message", "[report]") {
  CHECK_THAT(failure_report({}, 0, 0, 1, 1), Contains("no instance's agent said how it ended"));
}

TEST_CASE("lost hosts open the report, instances that never said how they ended are named", "[report]") {
  const std::vector<popdist::cli::LostHost> lost{{"h2", {2, 3}, std::chrono::milliseconds(3200)}};
  auto text = failure_report({}, 0, 0, 1, 122, lost);
  CHECK_THAT(text, Contains("the job failed (lost host, exit status 122)") &&
                       Contains("  lost host: h2 (instances 2, 3; last heard 3.2 s ago): no word from its agents"));
  // --host-timeout 0: mpirun said 0, but two agents never said how their instances ended
  text = failure_report({}, 0, 0, 1, 1, {}, {{2, "h2"}, {3, "h2"}});
  CHECK_THAT(text, Contains("the job failed (exit code 1)") &&
                       Contains("  instance 2 on h2: never said how it ended") &&
                       Contains("  instance 3 on h2: never said how it ended"));
  CHECK(text.find("no instance's agent said how it ended") == std::string::npos);
  // after a failure: the teardown's silent instances on one line, after the ones it stopped
  const std::vector<Failure> failures{{{0, 1, 0, "h1"}, "", "stderr"}, {{1, 143, 1, "h1"}, "", "stderr"}};
  text = failure_report(failures, 0, 0, 1, 1, {}, {{2, "h2", true}, {3, "h2", true}});
  CHECK_THAT(text, Contains("stopped by the job's teardown after the first failure: instance(s) 1\n"
                            "  no word from instance(s) 2, 3: killed with their agents"));
  CHECK(text.find("never said how it ended") == std::string::npos);
  CHECK_THAT(failure_report({}, 0, 0, 1, 1, {}, {{2, "h2", true}}), Contains("no instance's agent said how it ended"));
}

namespace {

using popdist::cli::channel::Delivery;
using popdist::cli::channel::Ended;
using popdist::cli::channel::ErrorSource;

/// What the server would deliver: `host` said instance `index` ended `age` before `arrived`.
Delivery ended(const std::string& host, int index, int status, std::chrono::steady_clock::time_point arrived,
               std::chrono::milliseconds age, std::string text = "", ErrorSource source = ErrorSource::kStderr) {
  const auto age_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(age).count());
  return {host, arrived, Ended{index, status, age_ns, std::move(text), source}};
}

}  // namespace

// The issue's case: instance 3 on the remote host raised; its message arrives last (a slower
// link), yet its end, placed at arrival - age on popdist run's clock, is the earliest.
TEST_CASE("the root cause is the earliest end on popdist run's clock, wherever its message came from", "[report]") {
  popdist::cli::JobRecords records(4);
  const auto now = std::chrono::steady_clock::now() + std::chrono::hours(1);
  using std::chrono::milliseconds;
  records.on_delivery(ended("A", 0, 1, now, milliseconds(10), "gloo: connection closed by peer\n"));
  records.on_delivery(ended("A", 1, 143, now, milliseconds(20)));
  records.on_delivery(ended("B", 2, 143, now + milliseconds(50), milliseconds(80)));
  records.on_delivery(ended("B", 3, 1, now + milliseconds(60), milliseconds(500), "Traceback\nRuntimeError: boom\n",
                            ErrorSource::kTorchErrorFile));
  records.on_delivery(ended("B", 9, 1, now, milliseconds(9000)));  // no such instance: dropped
  const auto failures = popdist::cli::failures_in_order(records.snapshot());
  REQUIRE(failures.size() == 4);
  CHECK(failures[0].end.index == 3);
  CHECK(failures[0].end.host == "B");
  CHECK(failures[0].error_source == "torch error file");
  CHECK(failures[0].error_lines == "Traceback\nRuntimeError: boom\n");
  CHECK(failures[1].end.index == 2);  // 30 ms before arrival at +50: after instance 3
  CHECK(popdist::cli::first_failure_status(records.snapshot()) == 1);
}

TEST_CASE("a SIGTERM is never the root cause while another kind of failure exists", "[report]") {
  popdist::cli::JobRecords records(3);
  const auto now = std::chrono::steady_clock::now() + std::chrono::hours(1);
  using std::chrono::milliseconds;
  records.on_delivery(ended("A", 0, 143, now, milliseconds(100)));  // the teardown got there first
  records.on_delivery(ended("B", 2, 137, now, milliseconds(50)));   // the SIGKILL that caused it
  auto failures = popdist::cli::failures_in_order(records.snapshot());
  REQUIRE(failures.size() == 2);
  CHECK(failures[0].end.index == 2);
  const auto text = failure_report(failures, 0, 0, 1, 137);
  CHECK_THAT(text, Contains("first failure: instance 2 on B: SIGKILL (signal 9"));
  CHECK_THAT(text, Contains("stopped by the job's teardown after the first failure: instance(s) 0"));
  // only SIGTERMs: the earliest is first
  popdist::cli::JobRecords terminated(2);
  terminated.on_delivery(ended("A", 1, 143, now, milliseconds(100)));
  terminated.on_delivery(ended("A", 0, 143, now, milliseconds(50)));
  CHECK(popdist::cli::failures_in_order(terminated.snapshot()).front().end.index == 1);
  // success is no failure
  popdist::cli::JobRecords fine(1);
  fine.on_delivery(ended("A", 0, 0, now, milliseconds(1)));
  CHECK(popdist::cli::failures_in_order(fine.snapshot()).empty());
  CHECK_FALSE(popdist::cli::first_failure_status(fine.snapshot()).has_value());
}
