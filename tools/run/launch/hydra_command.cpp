#include "run/launch/hydra_command.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/argument_text.hpp"
#include "popdist/error.hpp"
#include "run/launch/command_parts.hpp"

namespace popdist::cli {
namespace {

bool has_any(const std::vector<std::string>& words, std::initializer_list<std::string_view> any_of) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& word) {
    return std::find(any_of.begin(), any_of.end(), word) != any_of.end();
  });
}

// Open MPI's options that hydra does not know: it stops at them ("match_arg: unrecognized argument
// mca", exit 255) after popdist run has started its channel. Refused first, with hydra's word.
void refuse_open_mpi_words(const std::vector<std::string>& words, std::string_view option) {
  for (const auto& word : words) {
    std::string_view hydra;
    if (word == "--mca" || word == "-mca" || word == "--gmca" || word == "-gmca") hydra = "hydra has no MCA parameters";
    if (word == "-x") hydra = "hydra's is -genv NAME VALUE (hydra passes your whole environment already)";
    if (word == "--oversubscribe" || word == "--allow-run-as-root") hydra = "hydra needs none";
    if (hydra.empty()) continue;
    throw UsageError(fmt::format("{} has Open MPI's {}, which hydra's mpiexec refuses: {} (--backend hydra; "
                                 "docs/guide/launchers.md has the table)",
                                 option, shown(word), hydra));
  }
}

// A user's `-genv NAME VALUE` or `-env NAME VALUE` of a variable popdist run sets.
void refuse_our_variables(const std::vector<std::string>& words, std::string_view option, const LaunchPlan& plan,
                          const MpirunContext& context) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != "-genv" && words[i] != "-env") continue;
    refuse_our_variable(words[i + 1], option, words[i] + " " + words[i + 1], plan, context);
  }
}

// Placement: `-hosts a,b -ppn n` puts n consecutive ranks on each host (the plan puts the same
// count on every host), so instance i lands on host i / n. Not MPICH's `-hosts a:n,b:n`: Intel
// MPI's hydra reads `a:n` as a host of that name (this machine's then goes through ssh, and the
// counts are lost); and hydra refuses Open MPI's `slots=`. Hydra limits nothing to a host's slots
// or cores: oversubscription needs no option.
void add_placement(MpirunCommand& command, const LaunchPlan& plan, const std::vector<std::string>& global) {
  if (plan.explicit_hosts && !plan.hosts.empty()) {
    std::string hosts;
    for (const auto& host : plan.hosts) hosts += fmt::format("{}{}", hosts.empty() ? "" : ",", host.name);
    command.argv.insert(command.argv.end(),
                        {"-hosts", hosts, "-ppn", std::to_string(plan.hosts.front().num_instances)});
  }
  if (has_any(global, {"-hosts", "--hosts", "-host", "--host", "-f", "-hostfile", "--hostfile", "-machinefile",
                       "--machinefile", "-ppn", "--ppn", "-rr", "--rr"})) {
    command.warnings.push_back(
        "--mpi-global-args changes the placement (-hosts/-f/-ppn/...): instances may not land where the plan says, "
        "and POPDIST_LOCAL_INSTANCE_INDEX may then disagree with hydra's MPI_LOCALRANKID");
  }
}

// Every backend's output reads the same: the agents tag each line as Open MPI's --tag-output
// does (`[1,I]<stdout>:`), where hydra's own -prepend-rank would say `[I] `.
bool agents_tag(MpirunCommand& command, const LaunchPlan& plan, const std::vector<std::string>& global) {
  const bool user_output_option = has_any(global, {"-prepend-rank", "--prepend-rank", "-l", "-prepend-pattern",
                                                   "--prepend-pattern", "-outfile-pattern", "-errfile-pattern"});
  if (plan.num_instances == 1 || user_output_option) return false;
  command.decisions.push_back("the agents tag each output line with [1,instance]<stdout>: (as Open MPI's --tag-output)");
  return true;
}

void add_binding(MpirunCommand& command, const RunOptions& options) {
  if (options.numa_aware) {
    command.argv.insert(command.argv.end(), {"-bind-to", "numa", "-map-by", "numa"});
    command.decisions.push_back("--numa-aware: added -bind-to numa -map-by numa");
  } else {
    command.decisions.push_back("hydra binds no instance to a core unless asked (-bind-to): nothing added");
  }
}

// The variables every instance shares, as hydra's -genv (each value one word: no shell between).
void add_exports(MpirunCommand& command, const MpirunContext& context) {
  auto& argv = command.argv;
  if (!context.master_addr.empty()) {
    argv.insert(argv.end(), {"-genv", "MASTER_ADDR", context.master_addr});
    argv.insert(argv.end(), {"-genv", "MASTER_PORT", std::to_string(context.master_port)});
  }
  for (const auto& [name, value] : context.exports) argv.insert(argv.end(), {"-genv", name, value});
}

}  // namespace

MpirunCommand build_hydra_command(const LaunchPlan& plan, const RunOptions& options, const MpirunContext& context) {
  const auto global = launcher_words(options.mpi_global_args, "--mpi-global-args");
  const auto local = launcher_words(options.mpi_local_args, "--mpi-local-args");
  refuse_open_mpi_words(global, "--mpi-global-args");
  refuse_open_mpi_words(local, "--mpi-local-args");
  refuse_our_variables(global, "--mpi-global-args", plan, context);
  refuse_our_variables(local, "--mpi-local-args", plan, context);
  MpirunCommand command;
  command.argv.push_back(context.mpirun);
  add_placement(command, plan, global);
  const bool tag_output = agents_tag(command, plan, global);
  add_binding(command, options);
  add_exports(command, context);
  command.decisions.push_back("hydra passes popdist run's whole environment to every instance: no variable named");
  command.argv.insert(command.argv.end(), global.begin(), global.end());
  command.argv.insert(command.argv.end(), {"-n", std::to_string(plan.num_instances)});
  command.argv.insert(command.argv.end(), local.begin(), local.end());
  append_agent(command.argv, plan, options, context, tag_output);
  return command;
}

}  // namespace popdist::cli
