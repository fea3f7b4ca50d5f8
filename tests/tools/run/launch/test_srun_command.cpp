// Slurm's srun command: the translation of popdist run's notions -- instance count, hosts as
// --nodes/--ntasks-per-node/--nodelist, oversubscription as --overcommit, the environment passed
// whole, shared variables through env(1), the agent in front tagging the output -- and the words
// srun would stop at or that would undo a graceful stop, refused first.
#include <catch2/catch.hpp>

#include <algorithm>

#include "command_words.hpp"
#include "job/launch_plan.hpp"
#include "popdist/error.hpp"
#include "run/launch/srun_command.hpp"

using popdist::cli::build_srun_command;
using popdist::cli::MpirunContext;
using popdist::cli::RunOptions;
using namespace command_words;

namespace {

MpirunContext context() { return command_words::context_for("srun", "a,b $HOME 'q'"); }

}  // namespace

TEST_CASE("srun: one step of N tasks, the agent in front, shared variables through env", "[srun]") {
  const auto plan = popdist::cli::plan_launch(4, 4, 1, {});
  const auto argv = build_srun_command(plan, options_for(4), context()).argv;
  CHECK(has_sequence(argv, {"srun", "--ntasks", "4", "--nodes", "1", "--export"}));
  CHECK(has_sequence(argv, {"--export", "ALL", "--kill-on-bad-exit=0", "--disable-status"}));
  const auto env = std::find(argv.begin(), argv.end(), "env");
  REQUIRE(env != argv.end());
  // one word each, commas and all: srun's --export=NAME=VALUE would split at the comma
  CHECK(Words(env, argv.end()) == Words{"env", "MASTER_ADDR=10.0.0.5", "MASTER_PORT=29500", "POPDIST_RESTART_COUNT=0",
                                        "MY VALUE=a,b $HOME 'q'", "popdist", "_instance", "--plan", "4,4,1,1",
                                        "--tag-output", "--", "prog", "arg 1"});
  for (const std::string word : {"--nodelist", "--overcommit", "--label", "-x", "--mca", "--ntasks-per-node"}) {
    INFO(word);
    CHECK_FALSE(has(argv, word));
  }
}

TEST_CASE("srun: each task's node in the plan's order, --overcommit past a host's slots", "[srun]") {
  const auto plan = popdist::cli::plan_launch(4, 4, 1, {{"n2", 1}, {"n1", 1}});
  const auto command = build_srun_command(plan, options_for(4), context());
  // the plan's order (n2 first), not Slurm's node order, which block distribution would follow
  CHECK(has_sequence(command.argv, {"--ntasks", "4", "--distribution", "arbitrary", "--nodelist", "n2,n2,n1,n1",
                                    "--overcommit"}));
  CHECK_FALSE(has(command.argv, "--ntasks-per-node"));
  const auto fits = build_srun_command(popdist::cli::plan_launch(2, 2, 1, {{"n1", 1}, {"n2", 1}}), options_for(2),
                                       context());
  CHECK_FALSE(has(fits.argv, "--overcommit"));
}

TEST_CASE("srun: the user's words are srun's own options, before the agent", "[srun]") {
  auto options = options_for(2);
  options.mpi_global_args = {"--partition debug"};
  options.mpi_local_args = {"--time=5 --nodelist=n2"};
  const auto command = build_srun_command(popdist::cli::plan_launch(2, 2, 1, {}), options, context());
  const auto agent = std::find(command.argv.begin(), command.argv.end(), "env");
  CHECK(has_sequence(Words(command.argv.begin(), agent), {"--partition", "debug", "--time=5", "--nodelist=n2"}));
  REQUIRE(command.warnings.size() == 1);
  CHECK_THAT(command.warnings[0], Catch::Contains("changes the placement"));
}

TEST_CASE("srun: Open MPI's and hydra's words, and those that would undo a graceful stop, refused", "[srun]") {
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  for (const std::string text : {"--mca pml ob1", "-genv A 1", "--oversubscribe", "-K", "--kill-on-bad-exit=1",
                                 "--label", "--export=NONE", "-J mine", "--job-name=mine"}) {
    INFO(text);
    auto options = options_for(2);
    options.mpi_global_args = {text};
    CHECK_THROWS_AS(build_srun_command(plan, options, context()), popdist::UsageError);
  }
  auto options = options_for(2);
  options.mpi_local_args = {"-K"};
  CHECK_THROWS_WITH(build_srun_command(plan, options, context()),
                    Catch::Contains("--mpi-local-args has '-K'") && Catch::Contains("gracefully"));
}

TEST_CASE("srun: one instance is not tagged; a ':' travels as a placeholder", "[srun]") {
  const auto argv =
      build_srun_command(popdist::cli::plan_launch(1, 1, 1, {}), options_for(1, {"prog", ":", "x"}), context()).argv;
  CHECK_FALSE(has(argv, "--tag-output"));
  CHECK(has_sequence(argv, {"--colons", "2", "--", "prog", "popdist-colon", "x"}));
}

TEST_CASE("srun: the step is named for the attempt's job directory, so that scancel can find it", "[srun]") {
  auto with_directory = context();
  with_directory.job_directory = "/tmp/x/popdist-run-Ab12Cd";
  CHECK(popdist::cli::srun_step_name(with_directory) == "popdist-run-Ab12Cd");
  const auto argv = build_srun_command(popdist::cli::plan_launch(2, 2, 1, {}), options_for(2), with_directory).argv;
  CHECK(has_sequence(argv, {"--disable-status", "--job-name", "popdist-run-Ab12Cd"}));
  // a dry run's template names it as it will be; no directory at all (unit tests of other parts): a fixed name
  with_directory.job_directory = "/tmp/popdist-run-XXXXXX";
  CHECK(popdist::cli::srun_step_name(with_directory) == "popdist-run-XXXXXX");
  with_directory.job_directory.clear();
  CHECK(popdist::cli::srun_step_name(with_directory) == "popdist-run");
}
