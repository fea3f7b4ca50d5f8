#include "run/launch/srun_command.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/argument_text.hpp"
#include "popdist/error.hpp"
#include "run/launch/command_parts.hpp"

namespace popdist::cli {
namespace {

bool starts_with_any(const std::vector<std::string>& words, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& word) {
    return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view prefix) {
      return word == prefix || (prefix.size() > 2 && word.rfind(std::string(prefix) + "=", 0) == 0);
    });
  });
}

// The word srun would stop at, or run differently with, and what to say instead.
std::string_view srun_instead(const std::string& word) {
  if (word == "--mca" || word == "-mca" || word == "--gmca") return "srun has no MCA parameters";
  if (word == "-genv" || word == "-env" || word == "-genvall") {
    return "srun passes popdist run's whole environment (--export=ALL): set the variable before popdist run";
  }
  if (word == "--oversubscribe" || word == "--allow-run-as-root") return "srun needs none (popdist adds --overcommit)";
  if (word == "--kill-on-bad-exit" || word == "-K" || word.rfind("--kill-on-bad-exit=", 0) == 0) {
    return "srun would SIGKILL the other instances; popdist run ends them gracefully itself";
  }
  if (word == "--label" || word == "-l") return "the agents tag each line with popdist's own tag already";
  if (word.rfind("--export", 0) == 0) return "popdist run passes its whole environment (--export=ALL)";
  if (word == "-J" || word.rfind("--job-name", 0) == 0) {
    return "popdist run names the step itself, to find it and pass a SIGTERM on; name the job with salloc or sbatch -J";
  }
  return {};
}

void refuse_foreign_words(const std::vector<std::string>& words, std::string_view option) {
  for (const auto& word : words) {
    const auto instead = srun_instead(word);
    if (instead.empty()) continue;
    throw UsageError(fmt::format("{} has {}, which popdist run does not pass to Slurm's srun: {} (--backend srun; "
                                 "docs/guide/launchers.md has the table)",
                                 option, shown(word), instead));
  }
}

// Placement: instance i runs on the plan's host of instance i. With hosts (--host, --hostfile, an
// allocation's nodes), srun's arbitrary distribution says so exactly: --nodelist names each
// task's node in task order (block distribution would follow Slurm's node order, not the plan's,
// and Slurm refuses a --ntasks-per-node above a node's CPUs even with --overcommit -- measured).
// Without hosts, one node of Slurm's choosing. Slurm has no slots: a host given more instances
// than its slots gets --overcommit (one CPU per task otherwise), as Open MPI's --oversubscribe.
void add_placement(MpirunCommand& command, const LaunchPlan& plan, const std::vector<std::string>& words) {
  auto& argv = command.argv;
  if (plan.explicit_hosts) {
    std::string names;
    for (const auto& instance : plan.instances) {
      names += fmt::format("{}{}", names.empty() ? "" : ",", plan.hosts[static_cast<std::size_t>(instance.host)].name);
    }
    argv.insert(argv.end(), {"--distribution", "arbitrary", "--nodelist", names});
  } else {
    argv.insert(argv.end(), {"--nodes", "1"});
  }
  const bool over = std::any_of(plan.hosts.begin(), plan.hosts.end(), [](const PlannedHost& host) {
    return host.slots && host.num_instances > *host.slots;
  });
  if (over) {
    argv.push_back("--overcommit");
    command.decisions.push_back("more instances than slots on a host: added --overcommit");
  }
  if (starts_with_any(words, {"-w", "--nodelist", "-N", "--nodes", "-m", "--distribution", "--ntasks-per-node",
                              "-x", "--exclude", "--relative"})) {
    command.warnings.push_back(
        "--mpi-*-args changes the placement (--nodelist/--nodes/--distribution/...): instances may not land where the "
        "plan says, and POPDIST_LOCAL_INSTANCE_INDEX may then disagree with SLURM_LOCALID");
  }
}

// The variables every instance shares, as words of env(1) in front of the agent: srun's own
// --export=ALL,NAME=VALUE splits at every comma of a value.
void add_exports(std::vector<std::string>& argv, const MpirunContext& context) {
  std::vector<std::string> assignments;
  if (!context.master_addr.empty()) {
    assignments.push_back("MASTER_ADDR=" + context.master_addr);
    assignments.push_back("MASTER_PORT=" + std::to_string(context.master_port));
  }
  for (const auto& [name, value] : context.exports) assignments.push_back(name + "=" + value);
  if (assignments.empty()) return;
  argv.push_back("env");
  argv.insert(argv.end(), assignments.begin(), assignments.end());
}

}  // namespace

std::string srun_step_name(const MpirunContext& context) {
  const auto& directory = context.job_directory;
  const auto slash = directory.rfind('/');
  const auto name = slash == std::string::npos ? directory : directory.substr(slash + 1);
  return name.empty() ? std::string("popdist-run") : name;
}

MpirunCommand build_srun_command(const LaunchPlan& plan, const RunOptions& options, const MpirunContext& context) {
  auto words = launcher_words(options.mpi_global_args, "--mpi-global-args");
  const auto local = launcher_words(options.mpi_local_args, "--mpi-local-args");
  refuse_foreign_words(words, "--mpi-global-args");
  refuse_foreign_words(local, "--mpi-local-args");
  words.insert(words.end(), local.begin(), local.end());
  MpirunCommand command;
  command.argv = {context.mpirun, "--ntasks", std::to_string(plan.num_instances)};
  add_placement(command, plan, words);
  // A failed instance must not end the others by SIGKILL (a site's KillOnBadExit=1): popdist run
  // stops them itself, gracefully, and names the first failure.
  // srun's own SIGTERM is SIGKILL of every task: popdist run passes a SIGTERM on to the step
  // named here with scancel, and stops srun itself with one SIGINT, which --disable-status passes
  // on to every task at once (without, srun prints the tasks' status).
  command.argv.insert(command.argv.end(), {"--export", "ALL", "--kill-on-bad-exit=0", "--disable-status",
                                           "--job-name", srun_step_name(context)});
  command.decisions.push_back("srun passes popdist run's whole environment to every task (--export ALL)");
  command.decisions.push_back("--kill-on-bad-exit=0: popdist run ends the others itself after a failure");
  if (options.numa_aware) {
    command.argv.push_back("--cpu-bind=ldoms");
    command.decisions.push_back("--numa-aware: added --cpu-bind=ldoms");
  }
  command.argv.insert(command.argv.end(), words.begin(), words.end());
  add_exports(command.argv, context);
  const bool tag_output = plan.num_instances > 1;
  if (tag_output) command.decisions.push_back("the agents tag each output line with [1,instance]<stdout>:");
  append_agent(command.argv, plan, options, context, tag_output);
  return command;
}

}  // namespace popdist::cli
