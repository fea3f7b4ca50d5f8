// The agent's fence (agent/host_fence.hpp): when it is due (pure: off, never heard, heard lately,
// silent for the timeout, the agent itself stopped), the line it writes, and the fence on a real
// program -- SIGTERM, and SIGKILL after the grace period for one that ignores SIGTERM -- with the
// line in the instance's log.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/host_fence.hpp"

using namespace popdist::cli;
using namespace std::chrono_literals;

namespace {

const auto kStart = SteadyClock::time_point(100s);
const FenceSettings kTenSeconds{10s, 1s};

/// A program in a process group of its own (so the fence signals it alone, never the test):
/// `sh -c script`.
pid_t start_program(const char* script) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", script, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("fence_due: off, or popdist run never heard: never", "[fence]") {
  CHECK_FALSE(fence_due(FenceSettings{0ms, 1s}, kStart, kStart, kStart + 1h));
  CHECK_FALSE(fence_due(kTenSeconds, std::nullopt, kStart, kStart + 1h));
}

TEST_CASE("fence_due: heard within the timeout: not yet, silent for it: now, with the silence", "[fence]") {
  CHECK_FALSE(fence_due(kTenSeconds, kStart, kStart, kStart + 9999ms));
  CHECK(fence_due(kTenSeconds, kStart, kStart, kStart + 10s) == 10000ms);
  CHECK(fence_due(kTenSeconds, kStart, kStart - 1h, kStart + 12345ms) == 12345ms);
}

TEST_CASE("fence_due: the agent stopped itself: the count starts anew at its resumption", "[fence]") {
  const auto resumed = kStart + 1h;
  CHECK_FALSE(fence_due(kTenSeconds, kStart, resumed, resumed + 1s));
  CHECK_FALSE(fence_due(kTenSeconds, kStart, resumed, resumed + 9s));
  CHECK(fence_due(kTenSeconds, kStart, resumed, resumed + 10s) == 3610000ms);  // the silence as it was
}

TEST_CASE("fence_message: which instance and host, how long since heard, the timeout and the grace", "[fence]") {
  CHECK(fence_message(3, "h2", 10432ms, FenceSettings{10s, 2s}) ==
        "instance 3 on host h2: nothing heard from popdist run for 10.4 s (--host-timeout 10 s): this host is cut off "
        "from the job, which has lost it; ending the program as a teardown would (SIGTERM, then SIGKILL after the 2 s "
        "grace period)");
  CHECK(fence_message(0, "a", 2600ms, FenceSettings{2500ms, 1s}).find("for 2.6 s (--host-timeout 2.5 s)") !=
        std::string::npos);
}

TEST_CASE("a fence on a program that popdist run no longer beats: SIGTERM, and the line in its log", "[fence]") {
  char log_path[] = "/tmp/popdist-fence-log-XXXXXX";
  const int log = ::mkstemp(log_path);
  REQUIRE(log >= 0);
  const auto heard = SteadyClock::now();
  HostFence fence(FenceSettings{300ms, 5s}, 7, "cut-off-host", [heard] { return std::optional(heard); });
  const pid_t program = start_program("exec sleep 60");
  fence.watch(program, log);
  const int status = wait_for_program(program, fence);
  CHECK(fence.fenced());
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  const auto text = file_text(log_path);
  CHECK(text.find("popdist run: instance 7 on host cut-off-host: nothing heard from popdist run for") == 0);
  CHECK(text.find("(--host-timeout 0.3 s)") != std::string::npos);
  ::close(log);
  ::unlink(log_path);
}

TEST_CASE("a fence on a program that ignores SIGTERM: SIGKILL after the grace period", "[fence]") {
  const auto heard = SteadyClock::now();
  HostFence fence(FenceSettings{300ms, 1s}, 1, "h", [heard] { return std::optional(heard); });
  const pid_t program = start_program("trap '' TERM; while :; do sleep 0.05; done");
  std::this_thread::sleep_for(100ms);  // the trap set
  fence.watch(program, -1);
  const int status = wait_for_program(program, fence);
  CHECK(fence.fenced());
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("no fence while popdist run is heard, nor before it was ever heard", "[fence]") {
  std::optional<SteadyClock::time_point> never;
  HostFence fresh(FenceSettings{300ms, 1s}, 0, "h", [] { return std::optional(SteadyClock::now()); });
  HostFence unheard(FenceSettings{300ms, 1s}, 1, "h", [never] { return never; });
  const pid_t a = start_program("sleep 1.5");
  const pid_t b = start_program("sleep 1.5");
  fresh.watch(a, -1);
  unheard.watch(b, -1);
  const int status_a = wait_for_program(a, fresh);
  const int status_b = wait_for_program(b, unheard);
  CHECK_FALSE(fresh.fenced());
  CHECK_FALSE(unheard.fenced());
  CHECK((WIFEXITED(status_a) && WEXITSTATUS(status_a) == 0));
  CHECK((WIFEXITED(status_b) && WEXITSTATUS(status_b) == 0));
}
