// The stack report (stack_report.hpp): faulthandler's text parsed into threads and frames, the
// .python marker, the report's lines, and a job directory whose instances cannot be reached (no
// signal is sent to anyone here).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "job/job_directory.hpp"
#include "stacks/stack_report.hpp"

using popdist::cli::format_stack_report;
using popdist::cli::InstanceStacks;
using popdist::cli::parse_faulthandler_dump;
using popdist::cli::parse_python_marker;
using popdist::cli::recorded_instance_count;

namespace {

// What Python 3.11's faulthandler writes for faulthandler.register(signal, all_threads=True): the
// thread that ran the handler is "Current thread"; threads are newest first, a blank line between.
const char* const dump =
    "Thread 0x00007f2b5e7fc640 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 327 in wait\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
    "\n"
    "Current thread 0x00007f2b6a1b3740 (most recent call first):\n"
    "  File \"/work/job/train.py\", line 14 in all_reduce\n"
    "  File \"/work/odd\", line 9 in x.py\", line 22 in <module>\n";

}  // namespace

TEST_CASE("faulthandler's dump is parsed into threads and frames, innermost first", "[stacks]") {
  const auto threads = parse_faulthandler_dump(dump);
  REQUIRE(threads.size() == 2);
  CHECK(threads[0].id == 0x00007f2b5e7fc640ULL);
  CHECK_FALSE(threads[0].current);
  REQUIRE(threads[0].frames.size() == 2);
  CHECK(threads[0].frames[0].file == "/usr/lib/python3.11/threading.py");
  CHECK(threads[0].frames[0].line == 327);
  CHECK(threads[0].frames[0].function == "wait");
  CHECK(threads[1].id == 0x00007f2b6a1b3740ULL);
  CHECK(threads[1].current);
  REQUIRE(threads[1].frames.size() == 2);
  CHECK(threads[1].frames[0].function == "all_reduce");
  // a file name with `", line ` in it: the last one ends the name
  CHECK(threads[1].frames[1].file == "/work/odd\", line 9 in x.py");
  CHECK(threads[1].frames[1].line == 22);
  CHECK(threads[1].frames[1].function == "<module>");
  CHECK(threads[0].other_lines.empty());
}

TEST_CASE("unknown lines, threads without frames and a dump still being written", "[stacks]") {
  const auto threads = parse_faulthandler_dump(
      "Thread 0x0000000000000001 [worker] (most recent call first):\n"
      "  <no Python frame>\n"
      "\n"
      "Stack (most recent call first):\n"
      "  File \"a.py\", line ??? in f\n"
      "  ...\n"
      "  File \"b.py\", line 3 in g\n"
      "  File \"c.py\", li");
  REQUIRE(threads.size() == 2);
  CHECK(threads[0].id == 1);  // a thread name after the ident (newer Pythons) is no part of it
  CHECK(threads[0].frames.empty());
  CHECK(threads[0].other_lines == std::vector<std::string>{"<no Python frame>"});
  CHECK(threads[1].id == 0);
  REQUIRE(threads[1].frames.size() == 2);  // the unfinished last line is left out
  CHECK(threads[1].frames[0].line == -1);
  CHECK(threads[1].other_lines == std::vector<std::string>{"..."});
  CHECK(parse_faulthandler_dump("").empty());
  CHECK(parse_faulthandler_dump("\n\n").empty());
}

TEST_CASE("the .python marker", "[stacks]") {
  const auto marker = parse_python_marker("pid=4242 thread=139824183899968 host=node-1\n");
  REQUIRE(marker);
  CHECK(marker->pid == 4242);
  CHECK(marker->main_thread == 139824183899968ULL);
  CHECK(marker->host == "node-1");
  CHECK(parse_python_marker("thread=5 pid=7")->pid == 7);
  CHECK_FALSE(parse_python_marker(""));
  CHECK_FALSE(parse_python_marker("pid=0 thread=1"));
  CHECK_FALSE(parse_python_marker("4242 1"));
}

TEST_CASE("the report names each instance's main-thread frame, then every dump", "[stacks]") {
  std::vector<InstanceStacks> instances(4);
  for (int i = 0; i < 4; ++i) instances[static_cast<std::size_t>(i)].index = i;
  instances[0].state = InstanceStacks::State::answered;
  instances[0].marker = {4242, 0x00007f2b6a1b3740ULL, "node-1"};
  instances[0].threads = parse_faulthandler_dump(dump);
  instances[1].state = InstanceStacks::State::no_hook;
  instances[2].state = InstanceStacks::State::ended;
  instances[2].marker = {4343, 1, "node-2"};
  instances[3].state = InstanceStacks::State::no_answer;
  instances[3].marker = {4444, 1, ""};
  const auto report = format_stack_report("the job in /tmp/popdist-run-x", instances, std::chrono::seconds(5));
  INFO(report);
  CHECK(report.rfind("Where is everyone? 4 instance(s) of the job in /tmp/popdist-run-x\n", 0) == 0);
  CHECK(report.find("  instance 0: /work/job/train.py:14 in all_reduce  (pid 4242 on node-1)\n") != std::string::npos);
  CHECK(report.find("  instance 1: no Python stack hook: not a Python program, or its hook has not run yet\n") !=
        std::string::npos);
  CHECK(report.find("  instance 2: ended before it was asked on node-2\n") != std::string::npos);
  CHECK(report.find("  instance 3: no answer within 5.0 s (pid 4444)") != std::string::npos);
  // the full dump: all threads, the main thread named, after the summary
  const auto dump_at = report.find("\ninstance 0 (pid 4242 on node-1): 2 thread(s), most recent call first\n");
  REQUIRE(dump_at != std::string::npos);
  CHECK(dump_at > report.find("  instance 3:"));
  CHECK(report.find("    thread 0x00007f2b5e7fc640:\n"
                    "      File \"/usr/lib/python3.11/threading.py\", line 327 in wait\n") > dump_at);
  CHECK(report.find("    main thread 0x00007f2b6a1b3740:\n"
                    "      File \"/work/job/train.py\", line 14 in all_reduce\n") > dump_at);
  CHECK(report.find("\ninstance 3 (") == std::string::npos);  // no dump, no section
}

TEST_CASE("a main thread without Python frames, or missing from the dump", "[stacks]") {
  std::vector<InstanceStacks> instances(2);
  instances[0].state = instances[1].state = InstanceStacks::State::answered;
  instances[1].index = 1;
  instances[0].marker = {10, 1, "h"};
  instances[0].threads = parse_faulthandler_dump("Current thread 0x0000000000000001 (most recent call first):\n"
                                                 "  <no Python frame>\n");
  instances[1].marker = {11, 99, "h"};
  instances[1].threads = instances[0].threads;
  const auto report = format_stack_report("j", instances, std::chrono::seconds(1));
  INFO(report);
  CHECK(report.find("  instance 0: main thread: no Python frame  (pid 10 on h)\n") != std::string::npos);
  CHECK(report.find("  instance 1: main thread not in the dump (1 thread(s))  (pid 11 on h)\n") != std::string::npos);
}

TEST_CASE("an agent signals only its own program, and reads back the dump", "[stacks]") {
  const popdist::cli::JobDirectory directory;  // a real popdist-run-* directory
  const auto& job = directory.path();
  REQUIRE_FALSE(job.empty());
  // no marker: no hook
  auto dump = popdist::cli::dump_own_stacks(job, 0, std::chrono::milliseconds(200));
  CHECK_FALSE(dump.marker.has_value());
  // a marker naming a process that has ended (a child, reaped): nothing signalled, no dump
  const pid_t ended = ::fork();
  if (ended == 0) ::_exit(0);
  ::waitpid(ended, nullptr, 0);
  std::ofstream(job + "/instance1.python") << "pid=" << ended << " thread=1 host=h\n";
  dump = popdist::cli::dump_own_stacks(job, 1, std::chrono::milliseconds(200));
  REQUIRE(dump.marker.has_value());
  CHECK(dump.marker->pid == ended);
  CHECK(dump.text.empty());
  // a live process (this test) whose environment names no such job: not signalled
  std::ofstream(job + "/instance2.python") << "pid=" << ::getpid() << " thread=1 host=elsewhere\n";
  CHECK(popdist::cli::dump_own_stacks(job, 2, std::chrono::milliseconds(200)).text.empty());
  CHECK(recorded_instance_count(job) == 0);
  std::ofstream(job + "/popdist-run.pid") << ::getpid() << " 8\n";
  CHECK(recorded_instance_count(job) == 8);
}

TEST_CASE("a main thread inside a library is also named where the program called it", "[stacks]") {
  std::vector<InstanceStacks> instances(1);
  instances[0].state = InstanceStacks::State::answered;
  instances[0].marker = {10, 1, "h"};
  instances[0].threads = parse_faulthandler_dump(
      "Current thread 0x0000000000000001 (most recent call first):\n"
      "  File \"/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py\", line 2838 in all_reduce\n"
      "  File \"/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py\", line 81 in wrapper\n"
      "  File \"/work/job/train.py\", line 14 in main\n"
      "  File \"/work/job/train.py\", line 20 in <module>\n");
  const auto report = format_stack_report("j", instances, std::chrono::seconds(1));
  INFO(report);
  CHECK(report.find("  instance 0: /venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py:2838 in "
                    "all_reduce <- /work/job/train.py:14 in main  (pid 10 on h)\n") != std::string::npos);
}
