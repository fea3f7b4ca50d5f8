// The mpirun command line: MPMD app contexts with per-instance POPDIST_* values, placement,
// root, oversubscription, the single-host `pml ^cm` rule and the user's MPI arguments.
#include <catch2/catch.hpp>

#include <algorithm>

#include "command_length.hpp"
#include "launch_plan.hpp"
#include "mpirun_command.hpp"
#include "popdist/error.hpp"

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
  return context;
}

}  // namespace

TEST_CASE("one app context per instance with its POPDIST_* values, forwarded variables and program", "[command]") {
  const auto options = options_for(4, 8);
  const auto plan = popdist::cli::plan_launch(4, 8, 2, {{"a", {}}, {"b", {}}});
  const auto command = build_mpirun_command(plan, options, context_with(2));
  CHECK(command.argv.front() == "mpirun");
  const auto split = split_command(command.argv);
  REQUIRE(split.contexts.size() == 4);
  for (int i = 0; i < 4; ++i) {
    INFO("instance " << i);
    const Words& context = split.contexts[static_cast<std::size_t>(i)];
    Words expected{"-np", "1", "-x", "PATH", "-x", "PYTHONPATH"};
    for (const auto& [name, value] : popdist::cli::popdist_variables(plan, i)) {
      expected.insert(expected.end(), {"-x", name + "=" + value});
    }
    expected.insert(expected.end(), {"prog", "arg 1"});
    CHECK(context == expected);
  }
  CHECK(has_sequence(split.global, {"--host", "a:2,b:2"}));
  CHECK_FALSE(has_sequence(split.global, {"--oversubscribe"}));  // hosts of unknown size get exactly their slots
  CHECK(has_sequence(split.global, {"--tag-output"}));
  CHECK_FALSE(has_sequence(split.global, {"--mca", "pml", "^cm"}));  // two hosts may have a fabric
  CHECK_FALSE(has_sequence(split.global, {"--allow-run-as-root"}));
}

TEST_CASE("torchrun's variables in every app context, as torchrun defines them", "[command]") {
  const auto plan = popdist::cli::plan_launch(4, 4, 1, {{"a", {}}, {"b", {}}});
  auto context = context_with(2);
  context.master_addr = "10.0.0.5";
  context.master_port = 29500;
  const auto split = split_command(build_mpirun_command(plan, options_for(4, 4), context).argv);
  REQUIRE(split.contexts.size() == 4);
  for (int i = 0; i < 4; ++i) {
    INFO("instance " << i);
    const Words& words = split.contexts[static_cast<std::size_t>(i)];
    const std::string host = std::to_string(i / 2);
    for (const std::string& variable :
         {"RANK=" + std::to_string(i), std::string("WORLD_SIZE=4"), "LOCAL_RANK=" + std::to_string(i % 2),
          std::string("LOCAL_WORLD_SIZE=2"), "GROUP_RANK=" + host, std::string("GROUP_WORLD_SIZE=2"),
          std::string("MASTER_ADDR=10.0.0.5"), std::string("MASTER_PORT=29500")}) {
      CHECK(has_sequence(words, {"-x", variable}));
    }
    // popdist's detection keys torchrun on TORCHELASTIC_RUN_ID: never set, Open MPI stays the identity.
    CHECK(std::none_of(words.begin(), words.end(), [](const std::string& w) { return w.rfind("TORCHELASTIC", 0) == 0; }));
  }
}

TEST_CASE("as root: --allow-run-as-root", "[command]") {
  const auto plan = popdist::cli::plan_launch(1, 1, 1, {});
  const auto command = build_mpirun_command(plan, options_for(1, 1), context_with(2, true));
  CHECK(has_sequence(split_command(command.argv).global, {"--allow-run-as-root"}));
  CHECK(std::any_of(command.decisions.begin(), command.decisions.end(),
                    [](const std::string& d) { return d.find("--allow-run-as-root") != std::string::npos; }));
}

TEST_CASE("--oversubscribe with more instances than cores or slots on a host", "[command]") {
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
  for (const auto& context : split.contexts) {
    CHECK(has_sequence(context, {"-x", "MY_GLOBAL=1"}));
    CHECK(has_sequence(context, {"-x", "LOCAL_A", "--bind-to", "none", "prog", "arg 1"}));
  }
  CHECK(command.warnings.empty());

  options.mpi_global_args = {"--map-by node"};
  CHECK(build_mpirun_command(plan, options, context_with(4)).warnings.size() == 1);
  options.mpi_global_args = {"-x 'A"};
  CHECK_THROWS_WITH(build_mpirun_command(plan, options, context_with(4)),
                    Catch::Matchers::Contains("--mpi-global-args") && Catch::Matchers::Contains("unterminated"));
}

TEST_CASE("':' among the program's words reaches it verbatim; ':' or --app in --mpi-*-args is refused", "[command]") {
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  auto options = options_for(2, 2, {"prog", "x", ":", "-np", "1", "touch", "FILE", ":"});
  const auto command = build_mpirun_command(plan, options, context_with(4));
  // Exactly one ':' on the whole line: the separator between the two planned app contexts.
  CHECK(std::count(command.argv.begin(), command.argv.end(), ":") == 1);
  for (const auto& context : split_command(command.argv).contexts) {
    CHECK(has_sequence(context, {"popdist-colons", "3,8", "prog", "x", "popdist-colon", "-np", "1", "touch", "FILE",
                                 "popdist-colon"}));
  }
  // Without a ':' the program is started directly, with no shell in front.
  options.program = {"prog", "a:b", "::"};
  const auto direct = build_mpirun_command(plan, options, context_with(4));
  CHECK(std::count(direct.argv.begin(), direct.argv.end(), "popdist-colons") == 0);
  CHECK(has_sequence(direct.argv, {"prog", "a:b", "::"}));

  for (const auto& text : {": -np 1 echo INJECTED", "-x A=1 :", "--app /tmp/appfile", "-app f"}) {
    options.mpi_local_args = {text};
    CHECK_THROWS_WITH(build_mpirun_command(plan, options, context_with(4)),
                      Catch::Matchers::Contains("--mpi-local-args") &&
                          Catch::Matchers::Contains("would start another mpirun app context"));
    options.mpi_local_args.clear();
    options.mpi_global_args = {text};
    CHECK_THROWS_WITH(build_mpirun_command(plan, options, context_with(4)),
                      Catch::Matchers::Contains("--mpi-global-args") &&
                          Catch::Matchers::Contains("would start another mpirun app context"));
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
                        Catch::Matchers::Contains("--num-instances") &&
                        Catch::Matchers::Contains("101 bytes of environment"));
  const Words huge{"mpirun", std::string(popdist::cli::max_exec_string_bytes, 'x')};
  CHECK_THROWS_WITH(check_command_length(huge, 0, std::size_t{1} << 30, 1, {"prog"}),
                    Catch::Matchers::Contains("a word of 131072 bytes") && Catch::Matchers::Contains("(131072 bytes)"));
}

TEST_CASE("--tag-output for several instances unless the user chose an output option", "[command]") {
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

TEST_CASE("--only-output-from-instance silences the other instances through a shell", "[command]") {
  auto options = options_for(3, 3);
  options.only_output_from_instance = 1;
  const auto plan = popdist::cli::plan_launch(3, 3, 1, {});
  const auto split = split_command(build_mpirun_command(plan, options, context_with(4)).argv);
  const Words silenced{"/bin/sh", "-c", "exec \"$@\" >/dev/null 2>&1", "popdist-silenced", "prog", "arg 1"};
  CHECK(has_sequence(split.contexts[0], silenced));
  CHECK_FALSE(has_sequence(split.contexts[1], {"/bin/sh"}));
  CHECK(has_sequence(split.contexts[1], {"POPDIST_LOCAL_INSTANCE_INDEX=1", "prog", "arg 1"}));
  CHECK(has_sequence(split.contexts[2], silenced));
}

TEST_CASE("--numa-aware maps and binds by NUMA node", "[command]") {
  auto options = options_for(2, 2);
  options.numa_aware = true;
  const auto plan = popdist::cli::plan_launch(2, 2, 1, {});
  CHECK(has_sequence(split_command(build_mpirun_command(plan, options, context_with(4)).argv).global,
                     {"--map-by", "numa", "--bind-to", "numa"}));
}

TEST_CASE("tagged output: each instance runs under _whole-lines, except the silenced ones", "[command]") {
  auto context = context_with(4);
  context.whole_lines_launcher = "/opt/popdist/bin/popdist";
  const auto two = popdist::cli::plan_launch(2, 2, 1, {});
  const auto argv = build_mpirun_command(two, options_for(2, 2), context).argv;
  for (const auto& app_context : split_command(argv).contexts) {
    CHECK(has_sequence(app_context, {"/opt/popdist/bin/popdist", "_whole-lines", "--", "prog", "arg 1"}));
  }
  // one instance: no tags, no wrapper
  const auto one = popdist::cli::plan_launch(1, 1, 1, {});
  CHECK_FALSE(has_sequence(build_mpirun_command(one, options_for(1, 1), context).argv, {"_whole-lines"}));
  // the user's own --tag-output (one instance too) gets the wrapper as well
  auto user_tags = options_for(1, 1);
  user_tags.mpi_global_args = {"--tag-output"};
  CHECK(has_sequence(build_mpirun_command(one, user_tags, context).argv, {"_whole-lines", "--", "prog"}));
  // --only-output-from-instance: the visible instance whole, the others silenced
  auto only = options_for(2, 2);
  only.only_output_from_instance = 1;
  const auto contexts = split_command(build_mpirun_command(two, only, context).argv).contexts;
  REQUIRE(contexts.size() == 2);
  CHECK(has_sequence(contexts[0], {"popdist-silenced", "prog"}));
  CHECK_FALSE(has_sequence(contexts[0], {"_whole-lines"}));
  CHECK(has_sequence(contexts[1], {"_whole-lines", "--", "prog"}));
  // --output-filename: no tags, no wrapper
  auto files = options_for(2, 2);
  files.mpi_global_args = {"--output-filename out"};
  CHECK_FALSE(has_sequence(build_mpirun_command(two, files, context).argv, {"_whole-lines"}));
}

TEST_CASE("with a status directory, each wrapper records its instance's status in a file of its own", "[command]") {
  auto context = context_with(4);
  context.whole_lines_launcher = "/opt/popdist/bin/popdist";
  context.status_directory = "/tmp/popdist-run-abc";
  const auto contexts = split_command(build_mpirun_command(popdist::cli::plan_launch(3, 3, 1, {}), options_for(3, 3),
                                                           context).argv).contexts;
  REQUIRE(contexts.size() == 3);
  for (int index = 0; index < 3; ++index) {
    CHECK(has_sequence(contexts[index], {"_whole-lines", "--status-file",
                                         "/tmp/popdist-run-abc/instance" + std::to_string(index), "--", "prog"}));
  }
}

TEST_CASE("--enable-recovery in --mpi-global-args is warned about", "[command]") {
  auto options = options_for(2, 2);
  options.mpi_global_args = {"--enable-recovery"};
  const auto command = build_mpirun_command(popdist::cli::plan_launch(2, 2, 1, {}), options, context_with(4));
  REQUIRE(command.warnings.size() == 1);
  CHECK_THAT(command.warnings[0], Catch::Matchers::Contains("--kill-on-bad-exit"));
}
