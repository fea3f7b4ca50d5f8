// What popdist run asks Slurm under the srun backend, short of Slurm itself (the Slurm testbed's
// checks run it for real): commands bounded in time (run/supervise/bounded_command.hpp), squeue's
// answer read (run/supervise/slurm_step.hpp), and a SIGTERM to popdist run handed to
// LauncherSignals::deliver_term rather than sent to the launcher (process_runner.hpp).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>

#include "job/job_directory.hpp"
#include "run/supervise/bounded_command.hpp"
#include "run/supervise/process_runner.hpp"
#include "run/supervise/slurm_step.hpp"

using namespace popdist::cli;
using Catch::Matchers::Contains;

TEST_CASE("bounded command: output, status, a missing program, and the limit", "[slurm_step]") {
  const auto done = run_bounded({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(10));
  CHECK(done.status == 3);
  CHECK(done.out == "out\n");
  CHECK(done.err == "err\n");
  CHECK(done.problem.empty());
  const auto missing = run_bounded({"/nonexistent/squeue"}, std::chrono::seconds(10));
  CHECK(missing.status == -1);
  CHECK_THAT(missing.problem, Contains("cannot start /nonexistent/squeue") && Contains("No such file"));
  const auto slow = run_bounded({"sh", "-c", "sleep 30"}, std::chrono::milliseconds(200));
  CHECK(slow.status == -1);
  CHECK(slow.problem == "sh did not end within 0.2 s");
}

TEST_CASE("slurm step: squeue's answer names exactly one <job>.<step>", "[slurm_step]") {
  std::string why;
  CHECK(single_step_id("12.3\n", why) == std::optional<std::string>("12.3"));
  CHECK_FALSE(single_step_id("", why));
  CHECK_THAT(why, Contains("no such step"));
  CHECK_FALSE(single_step_id("12.3\n12.4\n", why));
  CHECK_THAT(why, Contains("not one <job>.<step>"));
  CHECK_FALSE(single_step_id("12\n", why));
  CHECK_FALSE(single_step_id("12.x\n", why));
}

TEST_CASE("slurm step: a Slurm command beside srun's path, else on PATH", "[slurm_step]") {
  CHECK(slurm_command_path("srun", "squeue") == "squeue");
  CHECK(slurm_command_path("/nonexistent/bin/srun", "squeue") == "squeue");
  CHECK(slurm_command_path("/bin/srun", "sh") == "/bin/sh");
}

namespace {

/// Runs `script` (which sends popdist run's process a SIGTERM) with a deliver_term that answers
/// `delivered` and creates `marker`; `stop` is SIGUSR1. Returns the status; counts the calls.
int run_with_deliver(const std::string& script, bool delivered, const std::string& marker, int& calls) {
  LauncherSignals signals{SIGTERM, SIGUSR1, SIGKILL, [&](int signal) {
                            ++calls;
                            CHECK(signal == SIGTERM);
                            std::ofstream(marker) << "delivered\n";
                            return delivered;
                          }};
  return run_watched("/bin/sh", {"sh", "-c", script}, {}, std::move(signals)).status;
}

}  // namespace

TEST_CASE("process runner: a SIGTERM goes to deliver_term, once, not to the launcher", "[slurm_step]") {
  const JobDirectory dir;
  const auto marker = dir.path() + "/marker";
  // the launcher ignores nothing: a SIGTERM sent on to it would end it with 143, not 4
  const auto script = "kill -TERM $PPID; i=0; while [ ! -e " + marker + " ] && [ $i -lt 100 ]; do sleep 0.05; "
                      "i=$((i+1)); done; sleep 0.3; exit 4";
  int calls = 0;
  CHECK(run_with_deliver(script, true, marker, calls) == 4);
  CHECK(calls == 1);
  CHECK(stop_signal_received() == SIGTERM);
}

TEST_CASE("process runner: when deliver_term fails, the launcher gets the stop signal", "[slurm_step]") {
  const JobDirectory dir;
  const auto marker = dir.path() + "/marker";
  const auto script = "trap 'exit 6' USR1; kill -TERM $PPID; i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); "
                      "done; exit 4";
  int calls = 0;
  CHECK(run_with_deliver(script, false, marker, calls) == 6);
  CHECK(calls == 1);
}

TEST_CASE("process runner: a watch's graceful ending goes to deliver_term too", "[slurm_step]") {
  const JobDirectory dir;
  const auto marker = dir.path() + "/marker";
  int calls = 0;
  LauncherSignals signals{SIGTERM, SIGUSR1, SIGKILL, [&](int signal) {
                            ++calls;
                            CHECK(signal == SIGTERM);
                            std::ofstream(marker) << "delivered\n";
                            return true;
                          }};
  // ends by itself once deliver_term has run: neither SIGUSR1 (stop) nor SIGTERM reached it
  const auto script = "i=0; while [ ! -e " + marker + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 0";
  std::vector<Watch> watches{[](pid_t) {
    WatchVerdict verdict;
    verdict.status = 125;
    verdict.ending = WatchVerdict::Ending::sigterm_then_sigkill;
    verdict.grace = std::chrono::seconds(5);
    return std::optional<WatchVerdict>(verdict);
  }};
  const auto run = run_watched("/bin/sh", {"sh", "-c", script}, std::move(watches), std::move(signals));
  CHECK(run.status == 125);
  CHECK(calls == 1);
}
