// The process runner: exit statuses, deaths by signal and programs that cannot start (real
// child processes through /bin/sh, no MPI).
#include <catch2/catch.hpp>

#include <optional>

#include <chrono>

#include "job/job_directory.hpp"
#include "popdist/error.hpp"
#include "run/supervise/process_runner.hpp"

using popdist::cli::HangWatch;
using popdist::cli::run_and_wait;

namespace {
HangWatch watch_for(std::chrono::milliseconds limit, std::optional<int> first_failure = std::nullopt) {
  HangWatch watch;
  watch.unreaped_limit = limit;
  watch.first_failure = [first_failure] { return first_failure; };
  return watch;
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
TEST_CASE("run_and_wait ends a program that leaves its ended children unreaped", "[process]") {
  const auto limit = watch_for(std::chrono::milliseconds(600));
  const auto start = std::chrono::steady_clock::now();
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "(exit 3) & (exit 0) & exec sleep 60"}, limit) == 3);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  // every child succeeded: so does the run
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "(exit 0) & exec sleep 60"}, limit) == 0);
  // a child killed by a signal counts as 128 + the signal
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "(sh -c 'kill -KILL $$') & exec sleep 60"}, limit) == 128 + 9);
}

TEST_CASE("run_and_wait leaves alone a program that reaps its children", "[process]") {
  const auto limit = watch_for(std::chrono::milliseconds(600));
  // the children end at once and are reaped; the program itself runs past the limit
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "(exit 3) & wait; sleep 1.5; exit 7"}, limit) == 7);
}

// The case that the agents' reports are for: the first instance to fail (status 3) was reaped by
// the hanging program, and only the instances it killed afterwards (SIGTERM) are left unreaped.
TEST_CASE("run_and_wait reports the first failure the agents told of, not its zombies'", "[process]") {
  const auto watch = watch_for(std::chrono::milliseconds(600), 3);
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "(sh -c 'kill -TERM $$') & exec sleep 60"}, watch) == 3);
  // no agent told of a failure: the zombies' lowest status
  CHECK(run_and_wait("/bin/sh", {"sh", "-c", "(sh -c 'kill -TERM $$') & exec sleep 60"},
                     watch_for(std::chrono::milliseconds(600))) == 128 + 15);
}
