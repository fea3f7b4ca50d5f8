// --report-file: the failure report as JSON (report_file.hpp), for programs that start popdist run.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run/report/report_file.hpp"

using Catch::Matchers::Contains;
using popdist::cli::AttemptOutcome;
using popdist::cli::Failure;
using popdist::cli::report_json;

TEST_CASE("the report file: the job's status, then each failure first first, escaped", "[report]") {
  const long long start = 1'000'000'000'000;
  const std::vector<Failure> failures{
      {{1, 1, start + 2'500'000'000, "node3"}, "Traceback:\n  \"x\"\nValueError: boom\n", "stderr"},
      {{0, 143, start + 2'600'000'000, "node2"}, "", "stderr"},
  };
  const auto json = report_json(AttemptOutcome{1, 1, 3, false, start, {}, {}}, failures);
  CHECK_THAT(json, Contains(R"("status": 1)") && Contains(R"("status_text": "exit code 1")") &&
                       Contains(R"("attempt": 1)") && Contains(R"("attempts": 3)") && Contains(R"("stopped": false)"));
  CHECK_THAT(json, Contains(R"("instance": 1)") && Contains(R"("host": "node3")") && Contains(R"("after_ms": 2500)") &&
                       Contains(R"("error_lines": "Traceback:\n  \"x\"\nValueError: boom\n")"));
  CHECK(json.find(R"("instance": 1)") < json.find(R"("instance": 0)"));
  // instance 0 was ended by the teardown (SIGTERM after the first failure); the first never is
  CHECK_THAT(json, Contains(R"("stopped_by_teardown": false)") && Contains(R"("stopped_by_teardown": true)"));
  CHECK(json.find(R"("stopped_by_teardown": false)") < json.find(R"("stopped_by_teardown": true)"));
  // the block popdist run prints, escaped as a JSON string
  CHECK_THAT(json, Contains(R"("text": "popdist run: the job failed (exit code 1), attempt 2 of 3\n)") &&
                       Contains(R"(  first failure: instance 1 on node3: exit code 1, 2.5 s after the start\n)") &&
                       Contains(R"(    ValueError: boom\n  stopped by the job's teardown after the first failure: )"
                                R"(instance(s) 0\n")"));
}

TEST_CASE("the report file: success has no failures, the file is replaced whole", "[report]") {
  CHECK_THAT(report_json(AttemptOutcome{0, 0, 1, false, 0, {}, {}}, {}),
             Contains(R"("failures": [])") && Contains(R"("text": "")"));
  const auto path = (std::filesystem::temp_directory_path() / "popdist-report-file-test.json").string();
  popdist::cli::write_report_file(path, AttemptOutcome{2, 0, 1, true, 0, {}, {}}, {});
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  CHECK_THAT(text.str(), Contains(R"("stopped": true)"));
  CHECK_FALSE(std::filesystem::exists(path + ".partial"));
  std::remove(path.c_str());
}

TEST_CASE("the report file: lost hosts, and instances that never said how they ended", "[report]") {
  AttemptOutcome lost;
  lost.status = 122;
  lost.lost = {{"h2", {2, 3}, std::chrono::milliseconds(3200)}};
  CHECK_THAT(report_json(lost, {}), Contains(R"("host": "h2")") && Contains(R"("last_heard_ms": 3200)") &&
                                        Contains(R"("unreported": [])"));
  AttemptOutcome unreported;
  unreported.status = 1;
  unreported.unreported = {{3, "h2"}};
  const auto json = report_json(unreported, {});
  CHECK_THAT(json, Contains(R"("lost_hosts": [])") && Contains(R"("instance": 3)") && Contains(R"("host": "h2")") &&
                       Contains("instance 3 on h2: never said how it ended") && Contains(R"("in_teardown": false)"));
  CHECK(json.find(R"("unreported": [])") == std::string::npos);
  unreported.unreported = {{3, "h2", true}};
  CHECK_THAT(report_json(unreported, {{{0, 1, 0, "h1"}, "", "stderr"}}),
             Contains(R"("in_teardown": true)") && Contains("no word from instance(s) 3"));
}
