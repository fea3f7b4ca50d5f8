// The failure report: statuses and signals by name with their likely meaning, torch's error
// file, the order of failures and the instances the teardown stopped.
#include <catch2/catch.hpp>

#include <fstream>

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

TEST_CASE("the report: first failure first with its lines; the teardown's victims on one line", "[report]") {
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
  CHECK_THAT(failure_report({}, 0, 0, 1, 1), Contains("no instance recorded how it ended"));
}

TEST_CASE("recorded failures read back from a job directory, the error file before stderr", "[report]") {
  const popdist::cli::JobDirectory directory;
  const auto& dir = directory.path();
  popdist::cli::record_instance_status(popdist::cli::instance_status_file(dir, 0), 0, "h");
  std::ofstream(popdist::cli::instance_file(dir, 1, ".stderr")) << "line a\nline b\n";
  popdist::cli::record_instance_status(popdist::cli::instance_status_file(dir, 1), 1, "h");
  std::ofstream(popdist::cli::instance_file(dir, 2, ".stderr")) << "ignored\n";
  std::ofstream(popdist::cli::instance_file(dir, 2, ".error.json")) << R"({"message": "ValueError: bad"})";
  popdist::cli::record_instance_status(popdist::cli::instance_status_file(dir, 2), 1, "h");
  const auto failures = popdist::cli::recorded_failures(dir);
  REQUIRE(failures.size() == 2);
  CHECK(failures[0].end.index == 1);
  CHECK(failures[0].error_lines == "line a\nline b\n");
  CHECK(failures[0].error_source == "stderr");
  CHECK(failures[1].error_lines == "ValueError: bad");
  CHECK(failures[1].error_source == "torch error file");
}
