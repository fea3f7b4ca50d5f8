// The mpirun command line: one app context with the instance agent, placement, root,
// oversubscription, binding, the single-host `pml ^cm` rule and the user's MPI arguments.
#include <catch2/catch.hpp>

#include <algorithm>

#include "agent/instance_agent.hpp"
#include "job/launch_plan.hpp"
#include "popdist/error.hpp"
#include "run/launch/command_length.hpp"
#include "run/launch/launcher_command.hpp"
#include "run/launch/mpirun_command.hpp"

using popdist::cli::build_launcher_command;
using popdist::cli::build_mpirun_command;
using popdist::cli::HostSpec;
using popdist::cli::MpirunContext;
using popdist::cli::RunOptions;
using Words = std::vector<std::string>;

namespace {

struct Split {
  Words global;                 // before the first -np
  std::vector<Words> contexts;  // each app context, without the ':' separators
};

Split split_command(const Words& argv) {
  Split split;
  auto it = std::find(argv.begin(), argv.end(), "-np");
  split.global.assign(argv.begin(), it);
  Words current;
  for (; it != argv.end(); ++it) {
    if (*it == ":") {
      split.contexts.push_back(current);
      current.clear();
    } else {
      current.push_back(*it);
    }
  }
  split.contexts.push_back(current);
  return split;
}

bool has_sequence(const Words& words, const Words& sequence) {
  return std::search(words.begin(), words.end(), sequence.begin(), sequence.end()) != words.end();
}

RunOptions options_for(int instances, int replicas, Words program = {"prog", "arg 1"}) {
  RunOptions options;
  options.num_instances = instances;
  options.num_replicas = replicas;
  options.program = std::move(program);
  return options;
}

MpirunContext context_with(int cores, bool root = false) {
  MpirunContext context;
  context.local_cores = cores;
  context.as_root = root;
  context.forwarded = {"PATH", "PYTHONPATH"};
  context.omp_threads = true;
  return context;
}

}  // namespace

TEST_CASE("one app context for every instance: forwarded variables, then the agent and the program", "[command]") {
  const auto options = options_for(4, 8);
  const auto plan = popdist::cli::plan_launch(4, 8, 2, {{"a", {}}, {"b", {}}});
  const auto command = build_mpirun_command(plan, options, context_with(2));
  CHECK(command.argv.front() == "mpirun");
  const auto split = split_command(command.argv);
  REQUIRE(split.contexts.size() == 1);
  const Words expected{"-np", "4", "-x", "PATH", "-x", "PYTHONPATH", "popdist", "_instance", "--plan", "4,8,2,2",
                       "--omp-threads", "--", "prog", "arg 1"};
  CHECK(split.contexts[0] == expected);
  CHECK(has_sequence(split.global, {"--host", "a:2,b:2", "--map-by", "ppr:2:node"}));
  CHECK_FALSE(has_sequence(split.global, {"--oversubscribe"}));  // hosts of unknown size get exactly their slots
  CHECK(has_sequence(split.global, {"--tag-output"}));
  CHECK_FALSE(has_sequence(split.global, {"--mca", "pml", "^cm"}));  // two hosts may have a fabric
  CHECK_FALSE(has_sequence(split.global, {"--allow-run-as-root"}));
}

TEST_CASE("MASTER_ADDR and MASTER_PORT once for every instance, the rest is the agent's", "[command]") {
  const auto plan = popdist::cli::plan_launch(4, 4, 1, {{"a", {}}, {"b", {}}});
  auto context = context_with(2);
  context.master_addr = "10.0.0.5";
  context.master_port = 29500;
  const auto split = split_command(build_mpirun_command(plan, options_for(4, 4), context).argv);
  REQUIRE(split.contexts.size() == 1);
  CHECK(has_sequence(split.contexts[0], {"-x", "MASTER_ADDR=10.0.0.5", "-x", "MASTER_PORT=29500"}));
  for (const std::string name : {"RANK=", "LOCAL_RANK=", "POPDIST_"}) {
    CHECK(std::none_of(split.contexts[0].begin(), split.contexts[0].end(),
                       [&](const std::string& w) { return w.rfind(name, 0) == 0; }));
  }
}

TEST_CASE("the command does not grow with the number of instances", "[command]") {
  auto length_for = [](int instances, std::vector<HostSpec> hosts) {
    const auto plan = popdist::cli::plan_launch(instances, instances, 1, hosts);
    return popdist::cli::exec_bytes(
        build_mpirun_command(plan, options_for(instances, instances), context_with(1 << 20)).argv);
  };
  const auto two = length_for(2, {});
  CHECK(length_for(4096, {}) <= two + 16);  // only the digits of counts grow
  CHECK(length_for(16384, {}) <= two + 16);
  CHECK(length_for(16384, {{"a", {}}, {"b", {}}}) <= length_for(2, {{"a", {}}, {"b", {}}}) + 32);
}

TEST_CASE("no CPU binding unless --numa-aware or the user's own", "[command]") {
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  auto global_of = [&](RunOptions options, MpirunContext context) {
    return split_command(build_mpirun_command(plan, options, context).argv).global;
  };
  CHECK(has_sequence(global_of(options_for(2, 2), context_with(4)), {"--bind-to", "none"}));
  auto numa = options_for(2, 2);
  numa.numa_aware = true;
  CHECK_FALSE(has_sequence(global_of(numa, context_with(4)), {"--bind-to", "none"}));
  for (const auto& words : {"--bind-to core", "--map-by socket:PE=2", "--rankfile rf", "-rf rf", "--cpu-set 0,1",
                            "--mca hwloc_base_binding_policy core"}) {
    INFO(words);
    auto user = options_for(2, 2);
    user.mpi_global_args = {words};
    CHECK_FALSE(has_sequence(global_of(user, context_with(4)), {"--bind-to", "none"}));
    user.mpi_global_args.clear();
    user.mpi_local_args = {words};
    CHECK_FALSE(has_sequence(global_of(user, context_with(4)), {"--bind-to", "none"}));
  }
  auto mapped = options_for(2, 2);
  mapped.mpi_global_args = {"--map-by node"};  // a mapping without PE= binds nothing by itself
  CHECK(has_sequence(global_of(mapped, context_with(4)), {"--bind-to", "none"}));
  auto context = context_with(4);
  context.env_binding = true;
  CHECK_FALSE(has_sequence(global_of(options_for(2, 2), context), {"--bind-to", "none"}));
}

TEST_CASE("the grace period from SIGTERM to SIGKILL is Open MPI's odls_base_sigkill_timeout", "[command]") {
  auto options = options_for(2, 2);
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  CHECK(has_sequence(build_mpirun_command(plan, options, context_with(4)).argv,
                     {"--mca", "odls_base_sigkill_timeout", "1"}));
  options.grace_period = 30;
  CHECK(has_sequence(build_mpirun_command(plan, options, context_with(4)).argv,
                     {"--mca", "odls_base_sigkill_timeout", "30"}));
}

TEST_CASE("mpirun command: odls_base_signal_direct_children_only also in every instance's environment",
          "[command]") {
  // Open MPI 5 does not put the parameter in the environment, where the agent reads it.
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  for (const std::string mca : {"--mca", "--prtemca", "-gmca"}) {
    INFO(mca);
    auto options = options_for(2, 2);
    options.mpi_global_args = {mca + " odls_base_signal_direct_children_only 1"};
    const auto split = split_command(build_mpirun_command(plan, options, context_with(4)).argv);
    CHECK(has_sequence(split.global, {mca, "odls_base_signal_direct_children_only", "1"}));
    CHECK(has_sequence(split.contexts.at(0), {"-x", "OMPI_MCA_odls_base_signal_direct_children_only=1"}));
  }
  const auto plain = build_mpirun_command(plan, options_for(2, 2), context_with(4)).argv;
  CHECK(std::none_of(plain.begin(), plain.end(),
                     [](const std::string& word) { return word.find("direct_children_only") != std::string::npos; }));
}

TEST_CASE("as root: --allow-run-as-root", "[command]") {
  const auto plan = popdist::cli::plan_launch(1, 1, 1, {});
  const auto command = build_mpirun_command(plan, options_for(1, 1), context_with(2, true));
  CHECK(has_sequence(split_command(command.argv).global, {"--allow-run-as-root"}));
  CHECK(std::any_of(command.decisions.begin(), command.decisions.end(),
                    [](const std::string& d) { return d.find("--allow-run-as-root") != std::string::npos; }));
}

TEST_CASE("mpirun command: --oversubscribe with more instances than cores or slots on a host", "[command]") {
  auto global_of = [](int instances, int cores, std::vector<HostSpec> hosts) {
    const auto plan = popdist::cli::plan_launch(instances, instances, 1, hosts);
    return split_command(build_mpirun_command(plan, options_for(instances, instances), context_with(cores)).argv).global;
  };
  CHECK(has_sequence(global_of(4, 2, {}), {"--oversubscribe"}));
  CHECK_FALSE(has_sequence(global_of(2, 2, {}), {"--oversubscribe"}));
  CHECK_FALSE(has_sequence(global_of(1, 1, {}), {"--oversubscribe"}));
  CHECK(has_sequence(global_of(4, 64, {{"a", 1}, {"b", 4}}), {"--oversubscribe"}));
  CHECK_FALSE(has_sequence(global_of(4, 1, {{"a", 2}, {"b", 2}}), {"--oversubscribe"}));
  CHECK_FALSE(has_sequence(global_of(4, 1, {{"a", {}}, {"b", {}}}), {"--oversubscribe"}));
  CHECK_FALSE(has_sequence(global_of(1, 2, {}), {"--host"}));  // this machine: no --host at all
}

TEST_CASE("single host: --mca pml ^cm unless the user chose a pml anywhere", "[command]") {
  auto command_for = [](RunOptions options, MpirunContext context, std::vector<HostSpec> hosts = {}) {
    const auto plan = popdist::cli::plan_launch(options.num_instances, total_replicas(options), 1, hosts);
    return build_mpirun_command(plan, options, context);
  };
  auto has_pml_cm = [](const popdist::cli::MpirunCommand& command) {
    return has_sequence(split_command(command.argv).global, {"--mca", "pml", "^cm"});
  };
  const auto plain = command_for(options_for(2, 2), context_with(4));
  CHECK(has_pml_cm(plain));
  CHECK(std::any_of(plain.decisions.begin(), plain.decisions.end(),
                    [](const std::string& d) { return d.find("added --mca pml ^cm") != std::string::npos; }));
  CHECK(has_pml_cm(command_for(options_for(2, 2), context_with(4), {{"onlyhost", {}}})));

  auto options = options_for(2, 2);
  options.mpi_global_args = {"--mca pml ob1"};
  const auto user_global = command_for(options, context_with(4));
  CHECK_FALSE(has_pml_cm(user_global));
  CHECK(has_sequence(split_command(user_global.argv).global, {"--mca", "pml", "ob1"}));
  CHECK(std::any_of(user_global.decisions.begin(), user_global.decisions.end(),
                    [](const std::string& d) { return d.find("not adding --mca pml ^cm") != std::string::npos; }));
  options.mpi_global_args = {"-mca pml ucx"};
  CHECK_FALSE(has_pml_cm(command_for(options, context_with(4))));
  options.mpi_global_args = {"-x OMPI_MCA_pml=ob1"};
  CHECK_FALSE(has_pml_cm(command_for(options, context_with(4))));
  options.mpi_global_args = {"--mca btl self,vader"};  // another MCA parameter is not a pml choice
  CHECK(has_pml_cm(command_for(options, context_with(4))));

  options = options_for(2, 2);
  options.mpi_local_args = {"--mca pml ob1"};
  CHECK_FALSE(has_pml_cm(command_for(options, context_with(4))));

  auto context = context_with(4);
  context.env_pml = "ob1";
  CHECK_FALSE(has_pml_cm(command_for(options_for(2, 2), context)));

  CHECK_FALSE(has_pml_cm(command_for(options_for(2, 2), context_with(4), {{"a", {}}, {"b", {}}})));
}

TEST_CASE("user MPI arguments: global before the contexts, local in each, -x moved into each", "[command]") {
  auto options = options_for(2, 2);
  options.mpi_global_args = {"--mca btl_tcp_if_include 'eth0' -x MY_GLOBAL=1"};
  options.mpi_local_args = {"-x LOCAL_A", "--bind-to none"};
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  const auto command = build_mpirun_command(plan, options, context_with(4));
  const auto split = split_command(command.argv);
  CHECK(has_sequence(split.global, {"--mca", "btl_tcp_if_include", "eth0"}));
  CHECK_FALSE(has_sequence(split.global, {"-x", "MY_GLOBAL=1"}));
  REQUIRE(split.contexts.size() == 1);
  CHECK(has_sequence(split.contexts[0], {"-x", "MY_GLOBAL=1"}));
  CHECK(has_sequence(split.contexts[0], {"-x", "LOCAL_A", "--bind-to", "none", "popdist", "_instance"}));
  CHECK(has_sequence(split.contexts[0], {"--", "prog", "arg 1"}));
  CHECK(command.warnings.empty());

  options.mpi_global_args = {"--map-by node"};
  CHECK(build_mpirun_command(plan, options, context_with(4)).warnings.size() == 1);
  // the user's mapping replaces popdist's so many per node
  const auto hosts = popdist::cli::plan_launch(2, 2, 1, {{"a", {}}, {"b", {}}});
  const auto mapped = build_mpirun_command(hosts, options, context_with(4)).argv;
  CHECK(std::count(mapped.begin(), mapped.end(), "--map-by") == 1);
  options.mpi_global_args = {"-x 'A"};
  CHECK_THROWS_WITH(build_mpirun_command(plan, options, context_with(4)),
                    Catch::Matchers::Contains("--mpi-global-args") && Catch::Matchers::Contains("unterminated"));
}

TEST_CASE("a user's -x of a variable popdist run sets is refused, naming it and what to use", "[command]") {
  auto options = options_for(2, 2);
  const auto plan = popdist::cli::plan_launch(2, 4, 1, {});
  auto context = context_with(4);
  context.master_addr = "10.0.0.5";
  context.master_port = 29500;
  context.exports = {{"POPDIST_RESTART_COUNT", "0"}};
  for (const auto& [args, name] : std::vector<std::pair<std::string, std::string>>{
           {"-x POPDIST_NUM_LOCAL_REPLICAS=5", "POPDIST_NUM_LOCAL_REPLICAS=2"},
           {"-x RANK", "RANK=0"},
           {"-x MASTER_PORT=1", "MASTER_PORT=29500"},
           {"-x POPDIST_RESTART_COUNT=3", "POPDIST_RESTART_COUNT=0"}}) {
    options.mpi_local_args = {args};
    CHECK_THROWS_WITH(build_mpirun_command(plan, options, context),
                      Catch::Matchers::Contains("--mpi-local-args -x") && Catch::Matchers::Contains(name) &&
                          Catch::Matchers::Contains("--num-replicas"));
    options.mpi_local_args = {};
    options.mpi_global_args = {args};
    CHECK_THROWS_WITH(build_mpirun_command(plan, options, context), Catch::Matchers::Contains("--mpi-global-args -x"));
    options.mpi_global_args = {};
  }
  options.mpi_local_args = {"-x RANKING=1 -x OMP_NUM_THREADS=4 -x PYTHONPATH"};  // not ours (OMP: only when unset)
  CHECK_NOTHROW(build_mpirun_command(plan, options, context));
}

TEST_CASE("':' among the program's words reaches it verbatim, ':' or --app in --mpi-*-args is refused", "[command]") {
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  auto options = options_for(2, 2, {"prog", "x", ":", "-np", "1", "touch", "FILE", ":"});
  const auto command = build_mpirun_command(plan, options, context_with(4));
  // No ':' on the whole line: the agent puts them back by position.
  CHECK(std::count(command.argv.begin(), command.argv.end(), ":") == 0);
  CHECK(has_sequence(command.argv, {"--colons", "3,8", "--", "prog", "x", "popdist-colon", "-np", "1", "touch", "FILE",
                                    "popdist-colon"}));
  CHECK(popdist::cli::with_colons({"prog", "x", "popdist-colon", "-np", "1", "touch", "FILE", "popdist-colon"}, "3,8") ==
        options.program);
  // Without a ':' the program's words go as they are.
  options.program = {"prog", "a:b", "::"};
  const auto direct = build_mpirun_command(plan, options, context_with(4));
  CHECK(std::count(direct.argv.begin(), direct.argv.end(), "--colons") == 0);
  CHECK(has_sequence(direct.argv, {"--", "prog", "a:b", "::"}));

  for (const auto& text : {": -np 1 echo INJECTED", "-x A=1 :", "--app /tmp/appfile", "-app f"}) {
    options.mpi_local_args = {text};
    CHECK_THROWS_WITH(build_mpirun_command(plan, options, context_with(4)),
                      Catch::Matchers::Contains("--mpi-local-args") &&
                          Catch::Matchers::Contains("would start another app context"));
    options.mpi_local_args.clear();
    options.mpi_global_args = {text};
    CHECK_THROWS_WITH(build_mpirun_command(plan, options, context_with(4)),
                      Catch::Matchers::Contains("--mpi-global-args") &&
                          Catch::Matchers::Contains("would start another app context"));
    options.mpi_global_args.clear();
  }
  options.mpi_local_args = {"-x 'A=a : b'"};  // a quoted word that holds a ':' is one word, not a separator
  CHECK_NOTHROW(build_mpirun_command(plan, options, context_with(4)));
}

TEST_CASE("the command's length is checked against the exec limit, naming what to change", "[command]") {
  using popdist::cli::check_command_length;
  using popdist::cli::exec_bytes;
  const Words argv{"mpirun", "-np", "1", "prog"};
  CHECK(exec_bytes(argv) == 7 + 4 + 2 + 5 + 4 * sizeof(char*));
  CHECK_NOTHROW(check_command_length(argv, 100, exec_bytes(argv) + 100, 1, {"prog"}));
  CHECK_THROWS_WITH(check_command_length(argv, 101, exec_bytes(argv) + 100, 4096, {"prog"}),
                    Catch::Matchers::Contains("ARG_MAX") && Catch::Matchers::Contains("4096 instances") &&
                        Catch::Matchers::Contains("101 bytes of environment"));
  // Open MPI's OMPI_ARGV: the app's words joined must fit one string
  const Words long_app{"mpirun", "popdist", "_instance", "--plan", "2,2,1,1", "--", "prog",
                       std::string(131060, 'y')};
  CHECK_THROWS_WITH(check_command_length(long_app, 0, std::size_t{1} << 30, 2, {"prog", std::string(131060, 'y')}),
                    Catch::Matchers::Contains("OMPI_ARGV") && Catch::Matchers::Contains("131066 bytes"));
  const Words huge{"mpirun", std::string(popdist::cli::kMaxExecStringBytes, 'x')};
  CHECK_THROWS_WITH(check_command_length(huge, 0, std::size_t{1} << 30, 1, {"prog"}),
                    Catch::Matchers::Contains("a word of 131072 bytes") && Catch::Matchers::Contains("(131072 bytes)"));
}

TEST_CASE("mpirun command: --tag-output for several instances unless the user chose an output option", "[command]") {
  const auto one = popdist::cli::plan_launch(1, 1, 1, {});
  CHECK_FALSE(has_sequence(build_mpirun_command(one, options_for(1, 1), context_with(4)).argv, {"--tag-output"}));
  const auto two = popdist::cli::plan_launch(2, 2, 1, {});
  auto options = options_for(2, 2);
  CHECK(has_sequence(build_mpirun_command(two, options, context_with(4)).argv, {"--tag-output"}));
  options.mpi_global_args = {"--timestamp-output"};
  const auto argv = build_mpirun_command(two, options, context_with(4)).argv;
  CHECK_FALSE(has_sequence(argv, {"--tag-output"}));
  CHECK(has_sequence(argv, {"--timestamp-output"}));
}

TEST_CASE("mpirun command: under Open MPI 5 the agents tag each line, as Open MPI 4's --tag-output", "[command]") {
  // Open MPI 5's --tag-output writes "[1,0]<stdout>: line", 4's and hydra's agents "[1,0]<stdout>:line".
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  popdist::cli::Launcher launcher{popdist::cli::Backend::openmpi, "/v/bin/mpirun", "mpirun", "Open MPI 5.0.11"};
  auto split = split_command(build_launcher_command(launcher, plan, options_for(2, 2), context_with(4)).argv);
  CHECK_FALSE(has_sequence(split.global, {"--tag-output"}));
  CHECK(has_sequence(split.contexts.at(0), {"--tag-output", "--", "prog", "arg 1"}));
  launcher.description = "Open MPI 4.1.4";
  split = split_command(build_launcher_command(launcher, plan, options_for(2, 2), context_with(4)).argv);
  CHECK(has_sequence(split.global, {"--tag-output"}));
  CHECK_FALSE(has_sequence(split.contexts.at(0), {"--tag-output", "--", "prog", "arg 1"}));
}

TEST_CASE("mpirun command: --only-output-from-instance tells every agent which instance to show", "[command]") {
  auto options = options_for(3, 3);
  options.only_output_from_instance = 1;
  const auto plan = popdist::cli::plan_launch(3, 3, 1, {});
  CHECK(has_sequence(build_mpirun_command(plan, options, context_with(4)).argv,
                     {"--output-from", "1", "--omp-threads", "--", "prog", "arg 1"}));
}

TEST_CASE("mpirun command: --numa-aware maps and binds by NUMA node", "[command]") {
  auto options = options_for(2, 2);
  options.numa_aware = true;
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  CHECK(has_sequence(split_command(build_mpirun_command(plan, options, context_with(4)).argv).global,
                     {"--map-by", "numa", "--bind-to", "numa"}));
}

TEST_CASE("the agent gets the job directory, the attempt's log folder and --tee", "[command]") {
  auto context = context_with(4);
  context.agent = "/opt/popdist/bin/popdist";
  context.job_directory = "/tmp/popdist-run-abc";
  context.log_directory = "/logs/attempt_0";
  auto options = options_for(3, 3);
  options.tee = true;
  const auto argv = build_mpirun_command(popdist::cli::plan_launch(3, 3, 1, {}), options, context).argv;
  CHECK(has_sequence(argv, {"/opt/popdist/bin/popdist", "_instance", "--plan", "3,3,1,1", "--job-dir",
                            "/tmp/popdist-run-abc", "--log-dir", "/logs/attempt_0", "--tee"}));
  // Open MPI's session files go in the job directory (removed with it), unless the user chose
  CHECK(has_sequence(argv, {"--mca", "orte_tmpdir_base", "/tmp/popdist-run-abc"}));
  options.mpi_global_args = {"--mca orte_tmpdir_base /scratch"};
  CHECK_FALSE(has_sequence(build_mpirun_command(popdist::cli::plan_launch(3, 3, 1, {}), options, context).argv,
                           {"--mca", "orte_tmpdir_base", "/tmp/popdist-run-abc"}));
  // OMP_NUM_THREADS set by the user: the agents leave it
  context.omp_threads = false;
  const auto without = build_mpirun_command(popdist::cli::plan_launch(3, 3, 1, {}), options_for(3, 3), context).argv;
  CHECK(std::count(without.begin(), without.end(), "--omp-threads") == 0);
}

TEST_CASE("mpirun command: --enable-recovery in --mpi-global-args is warned about", "[command]") {
  auto options = options_for(2, 2);
  options.mpi_global_args = {"--enable-recovery"};
  const auto command = build_mpirun_command(popdist::cli::plan_launch(2, 2, 1, {}), options, context_with(4));
  REQUIRE(command.warnings.size() == 1);
  CHECK_THAT(command.warnings[0], Catch::Matchers::Contains("--kill-on-bad-exit"));
}
