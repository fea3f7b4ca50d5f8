// Hydra's mpiexec command (MPICH, Intel MPI): the translation of popdist run's notions -- instance
// count, hosts as -hosts a,b -ppn n, oversubscription, exported variables, the agent in front (tagging the
// output as Open MPI would), the user's global and local words -- and what hydra would refuse,
// refused first.
#include <catch2/catch.hpp>

#include <algorithm>

#include "command_words.hpp"
#include "job/launch_plan.hpp"
#include "popdist/error.hpp"
#include "run/launch/hydra_command.hpp"
#include "run/launch/launcher_command.hpp"

using popdist::cli::build_hydra_command;
using popdist::cli::MpirunContext;
using popdist::cli::RunOptions;
using namespace command_words;

namespace {

Words before_n(const Words& argv) { return {argv.begin(), std::find(argv.begin(), argv.end(), "-n")}; }

MpirunContext context() { return command_words::context_for("mpiexec.hydra", "a b $HOME 'q'"); }

}  // namespace

TEST_CASE("hydra: one executable for every instance, the agent in front, variables as -genv", "[hydra]") {
  const auto plan = popdist::cli::plan_launch(4, 4, 1, {});
  const auto argv = build_hydra_command(plan, options_for(4), context()).argv;
  CHECK(argv.front() == "mpiexec.hydra");
  const auto n = std::find(argv.begin(), argv.end(), "-n");
  REQUIRE(n != argv.end());
  const Words rest(n, argv.end());
  CHECK(rest == Words{"-n", "4", "popdist", "_instance", "--plan", "4,4,1,1", "--tag-output", "--", "prog", "arg 1"});
  const auto global = before_n(argv);
  CHECK(has_sequence(global, {"-genv", "MASTER_ADDR", "10.0.0.5", "-genv", "MASTER_PORT", "29500"}));
  CHECK(has_sequence(global, {"-genv", "MY VALUE", "a b $HOME 'q'"}));  // one word each: no shell between
  // hydra passes the whole environment: no variable named, none of Open MPI's words
  for (const std::string word : {"-x", "PATH", "-prepend-rank", "--mca", "--bind-to", "-hosts", "--oversubscribe"}) {
    INFO(word);
    CHECK(std::find(argv.begin(), argv.end(), word) == argv.end());
  }
}

TEST_CASE("hydra: hosts as -hosts a,b -ppn n, oversubscribed without an option", "[hydra]") {
  const auto plan = popdist::cli::plan_launch(8, 8, 1, {{"a", 2}, {"b", 2}});
  const auto command = build_hydra_command(plan, options_for(8), context());
  // not MPICH's a:4,b:4, which Intel MPI reads as a host named "a:4"
  CHECK(has_sequence(before_n(command.argv), {"-hosts", "a,b", "-ppn", "4"}));
  for (const auto& word : command.argv) CHECK(word.find("slots") == std::string::npos);
  CHECK(std::find(command.argv.begin(), command.argv.end(), "--oversubscribe") == command.argv.end());
}

TEST_CASE("hydra: --mpi-global-args before -n, --mpi-local-args after it; one instance untagged", "[hydra]") {
  auto options = options_for(1);
  options.mpi_global_args = {"-iface lo -genv MY_VAR 1"};
  options.mpi_local_args = {"-env OTHER 2"};
  const auto argv = build_hydra_command(popdist::cli::plan_launch(1, 1, 1, {}), options, context()).argv;
  CHECK(has_sequence(before_n(argv), {"-iface", "lo", "-genv", "MY_VAR", "1"}));
  CHECK(has_sequence(argv, {"-n", "1", "-env", "OTHER", "2", "popdist", "_instance"}));
  CHECK(std::find(argv.begin(), argv.end(), "--tag-output") == argv.end());
  options.num_instances = 2;
  options.mpi_global_args = {"-prepend-pattern [%r]"};  // the user's own tags: none of the agents'
  const auto own = build_hydra_command(popdist::cli::plan_launch(2, 2, 1, {}), options, context()).argv;
  CHECK(std::find(own.begin(), own.end(), "--tag-output") == own.end());
}

TEST_CASE("hydra: Open MPI's words, our variables and another executable are refused first", "[hydra]") {
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  auto with_global = [&](const std::string& words) {
    auto options = options_for(2);
    options.mpi_global_args = {words};
    return build_hydra_command(plan, options, context());
  };
  CHECK_THROWS_WITH(with_global("--mca btl tcp"),
                    Catch::Contains("--mpi-global-args has Open MPI's '--mca', which hydra's mpiexec refuses"));
  CHECK_THROWS_WITH(with_global("-x FOO"), Catch::Contains("hydra's is -genv NAME VALUE"));
  CHECK_THROWS_WITH(with_global("-genv RANK 3"), Catch::Contains("popdist run sets RANK itself"));
  CHECK_THROWS_WITH(with_global("-genv MASTER_PORT 1"), Catch::Contains("popdist run sets MASTER_PORT itself"));
  CHECK_THROWS_WITH(with_global("-n 1 : other"), Catch::Contains("would start another app context"));
  auto options = options_for(2);
  options.mpi_local_args = {"-env LOCAL_RANK 0"};
  CHECK_THROWS_AS(build_hydra_command(plan, options, context()), popdist::UsageError);
}

TEST_CASE("hydra: a ':' among the program's words travels as a placeholder", "[hydra]") {
  const auto argv =
      build_hydra_command(popdist::cli::plan_launch(1, 1, 1, {}), options_for(1, {"prog", ":", "x"}), context()).argv;
  CHECK(has_sequence(argv, {"--colons", "2", "--", "prog", "popdist-colon", "x"}));
}

TEST_CASE("the launcher's command: argv[0] its bare name, the backend said", "[hydra]") {
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  popdist::cli::Launcher hydra{popdist::cli::Backend::hydra, "/usr/bin/mpiexec.hydra", "mpiexec.hydra",
                               "MPICH hydra 4.0.2"};
  const auto command = popdist::cli::build_launcher_command(hydra, plan, options_for(2), context());
  CHECK(command.argv.front() == "mpiexec.hydra");
  CHECK(command.launcher == "hydra: MPICH hydra 4.0.2 at /usr/bin/mpiexec.hydra");
  popdist::cli::Launcher open_mpi{popdist::cli::Backend::openmpi, "/usr/bin/mpirun", "mpirun", "Open MPI 4.1.4"};
  const auto mpirun = popdist::cli::build_launcher_command(open_mpi, plan, options_for(2), context());
  CHECK(mpirun.argv.front() == "mpirun");
  CHECK(std::find(mpirun.argv.begin(), mpirun.argv.end(), "--tag-output") != mpirun.argv.end());
  popdist::cli::Launcher srun{popdist::cli::Backend::srun, "/usr/bin/srun", "srun", "Slurm 22.05.8"};
  const auto step = popdist::cli::build_launcher_command(srun, plan, options_for(2), context());
  CHECK(step.argv.front() == "srun");
  CHECK(step.launcher == "srun: Slurm 22.05.8 at /usr/bin/srun");
}
