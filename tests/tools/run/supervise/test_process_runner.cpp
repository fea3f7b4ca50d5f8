// The process runner: exit statuses, deaths by signal and programs that cannot start, and the
// watches' verdicts ending a program as they say (real child processes through /bin/sh, no MPI).
#include <catch2/catch.hpp>

#include <optional>

#include <chrono>

#include "job/job_directory.hpp"
#include "popdist/error.hpp"
#include "run/supervise/hung_teardown.hpp"
#include "run/supervise/process_runner.hpp"

using popdist::cli::run_and_wait;
using popdist::cli::run_watched;
using popdist::cli::Watch;
using popdist::cli::WatchVerdict;

namespace {

std::vector<Watch> watch_for(std::chrono::milliseconds limit, std::optional<int> first_failure = std::nullopt) {
  return {popdist::cli::hung_teardown_watch(limit, [first_failure] { return first_failure; }, "sh")};
}

/// The status of `script` under `watches`.
int watched(const std::string& script, std::vector<Watch> watches) {
  return run_watched("/bin/sh", {"sh", "-c", script}, std::move(watches)).status;
}

/// A watch whose verdict is `verdict` from its `after`-th question on.
Watch verdict_after(int after, WatchVerdict verdict) {
  return [asked = 0, after, verdict](pid_t) mutable -> std::optional<WatchVerdict> {
    return ++asked >= after ? std::optional<WatchVerdict>(verdict) : std::nullopt;
  };
}

}  // namespace

TEST_CASE("run_and_wait returns the child's exit status", "[process]") {
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "exit 0"}) == 0);
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "exit 7"}) == 7);
  // argv[0] is what the child sees, whatever the path
  CHECK(run_and_wait("/bin/sh", {"custom-name", "-c", "test \"$0\" = custom-name"}) == 0);
}

TEST_CASE("run_and_wait reports a death by signal as 128 + the signal", "[process]") {
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "kill -TERM $$"}) == 128 + 15);
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "kill -KILL $$"}) == 128 + 9);
}

TEST_CASE("run_and_wait throws when the program cannot start, naming it", "[process]") {
  CHECK_THROWS_WITH(run_and_wait("/nonexistent/mpirun", {"mpirun"}),
                    Catch::Matchers::Contains("cannot start /nonexistent/mpirun") &&
                        Catch::Matchers::Contains("No such file"));
  CHECK_THROWS_AS(run_and_wait("/etc/hostname", {"hostname"}), popdist::Error);  // not executable
}

// A parent that never reaps its ended child stands in for an mpirun hanging in its teardown:
// `sleep` replaces the shell and never waits for the background subshell.
TEST_CASE("run_watched ends a program that leaves its ended children unreaped", "[process]") {
  const auto limit = watch_for(std::chrono::milliseconds(600));
  const auto start = std::chrono::steady_clock::now();
  CHECK(watched("(exit 3) & (exit 0) & exec sleep 60", limit) == 3);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  // every child succeeded: so does the run
  CHECK(watched("(exit 0) & exec sleep 60", limit) == 0);
  // a child killed by a signal counts as 128 + the signal
  CHECK(watched("(sh -c 'kill -KILL $$') & exec sleep 60", limit) == 128 + 9);
}

TEST_CASE("run_watched leaves alone a program that reaps its children", "[process]") {
  const auto limit = watch_for(std::chrono::milliseconds(600));
  // the children end at once and are reaped; the program itself runs past the limit
  CHECK(watched("(exit 3) & wait; sleep 1.5; exit 7", limit) == 7);
}

// The case that the agents' reports are for: the first instance to fail (status 3) was reaped by
// the hanging program, and only the instances it killed afterwards (SIGTERM) are left unreaped.
TEST_CASE("run_watched reports the first failure the agents told of, not its zombies'", "[process]") {
  const auto watch = watch_for(std::chrono::milliseconds(600), 3);
  CHECK(watched("(sh -c 'kill -TERM $$') & exec sleep 60", watch) == 3);
  // no agent told of a failure: the zombies' lowest status
  CHECK(watched("(sh -c 'kill -TERM $$') & exec sleep 60", watch_for(std::chrono::milliseconds(600))) == 128 + 15);
}

TEST_CASE("run_watched: a verdict ends the program as it says, with its status", "[process]") {
  using Ending = WatchVerdict::Ending;
  const auto start = std::chrono::steady_clock::now();
  // SIGTERM, and the program's own end waited for
  auto run = run_watched("/bin/sh", {"sh", "-c", "exec sleep 60"}, {verdict_after(1, {125, Ending::sigterm, {}, {}})});
  CHECK(run.status == 125);
  REQUIRE(run.verdict);
  CHECK(run.verdict->status == 125);
  // a program that ignores SIGTERM: SIGKILL after the grace
  const auto grace = std::chrono::milliseconds(300);
  run = run_watched("/bin/sh", {"sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"},
                    {verdict_after(1, {122, Ending::sigterm_then_sigkill, grace, {{"h2", {2, 3}, {}}}})});
  CHECK(run.status == 122);
  REQUIRE(run.verdict);
  REQUIRE(run.verdict->lost.size() == 1);
  CHECK(run.verdict->lost[0].host == "h2");  // what the watch found comes back with its verdict
  // SIGKILL at once
  CHECK(watched("trap '' TERM; exec sleep 60", {verdict_after(2, {7, Ending::sigkill, {}, {}})}) == 7);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("run_watched: the watches are asked in order, the first verdict wins", "[process]") {
  using Ending = WatchVerdict::Ending;
  const auto run = run_watched("/bin/sh", {"sh", "-c", "exec sleep 60"},
                               {verdict_after(3, {1, Ending::sigkill, {}, {}}), verdict_after(1, {2, Ending::sigkill, {}, {}})});
  CHECK(run.status == 2);
  // no verdict: the program's own status
  const auto quiet = run_watched("/bin/sh", {"sh", "-c", "sleep 0.7; exit 4"}, {verdict_after(1000, {1, Ending::sigkill, {}, {}})});
  CHECK(quiet.status == 4);
  CHECK_FALSE(quiet.verdict);
}
