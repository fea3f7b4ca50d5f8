// The process runner: exit statuses, deaths by signal and programs that cannot start (real
// child processes through /bin/sh, no MPI).
#include <catch2/catch.hpp>

#include "popdist/error.hpp"
#include "process_runner.hpp"

using popdist::cli::run_and_wait;

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
