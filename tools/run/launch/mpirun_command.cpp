#include "run/launch/mpirun_command.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/argument_text.hpp"
#include "job/agent_line.hpp"
#include "job/instance_plan.hpp"
#include "popdist/error.hpp"
#include "run/launch/command_parts.hpp"

namespace popdist::cli {
namespace {

bool contains(const std::vector<std::string>& words, std::initializer_list<std::string_view> any_of) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& word) {
    return std::find(any_of.begin(), any_of.end(), word) != any_of.end();
  });
}

bool contains_text(const std::vector<std::string>& words, std::string_view text) {
  return std::any_of(words.begin(), words.end(),
                     [&](const std::string& word) { return word.find(text) != std::string::npos; });
}

// The user's mpirun words: --mpi-global-args (without its -x pairs), those -x pairs, --mpi-local-args.
struct MpiWords {
  std::vector<std::string> global;
  std::vector<std::string> global_exports;
  std::vector<std::string> local;
};

// Where the user chose a pml themselves: `--mca pml X` (any of Open MPI's spellings) or
// `-x OMPI_MCA_pml=X` in their arguments. Returns a description for the -v message.
std::optional<std::string> user_pml_in(const std::vector<std::string>& words, std::string_view option) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& word = words[i];
    if ((word == "--mca" || word == "-mca" || word == "--gmca" || word == "-gmca") && words[i + 1] == "pml") {
      return fmt::format("{} has {} pml", option, word);
    }
    if (word == "-x" && words[i + 1].rfind("OMPI_MCA_pml", 0) == 0) return fmt::format("{} has -x {}", option, words[i + 1]);
  }
  return std::nullopt;
}

// The value of the user's `--mca odls_base_signal_direct_children_only V` (any of Open MPI's
// spellings, and Open MPI 5's --prtemca), the last one given.
std::optional<std::string> user_direct_children_only(const std::vector<std::string>& words) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i + 2 < words.size(); ++i) {
    const std::string& word = words[i];
    const bool mca = word == "--mca" || word == "-mca" || word == "--gmca" || word == "-gmca" ||
                     word == "--prtemca" || word == "-prtemca";
    if (mca && (words[i + 1] == "odls_base_signal_direct_children_only" ||
                words[i + 1] == "prte_odls_base_signal_direct_children_only")) {
      value = words[i + 2];
    }
  }
  return value;
}

// Open MPI's `-x VAR` written before the first app context reaches only that first context
// (measured with 4.1.4), so the -x pairs of --mpi-global-args are moved into every context.
std::vector<std::string> take_exports(std::vector<std::string>& words) {
  std::vector<std::string> exports;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "-x" && i + 1 < words.size()) {
      exports.push_back("-x");
      exports.push_back(words[++i]);
    } else {
      rest.push_back(words[i]);
    }
  }
  words = std::move(rest);
  return exports;
}

// A CPU binding chosen by the user: then popdist run adds none of its own.
bool user_binds(const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    for (const char* option : {"--bind-to", "-bind-to", "--cpu-set", "-cpu-set", "--cpu-list", "-cpu-list",
                               "--rankfile", "-rankfile", "-rf"}) {
      if (word == option || word.rfind(std::string(option) + "=", 0) == 0) return true;
    }
    if (word.find("hwloc_base_binding_policy") != std::string::npos) return true;
    const bool map_by = word == "--map-by" || word == "-map-by";
    if (map_by && i + 1 < words.size() && words[i + 1].find("PE=") != std::string::npos) return true;
  }
  return false;
}

// A user's `-x NAME[=value]` for a variable popdist run sets: refused, since one of the two would
// silently win (the agent sets the instance's own variables after mpirun's -x).
void refuse_our_variables(const std::vector<std::string>& words, std::string_view option, const LaunchPlan& plan,
                          const MpirunContext& context) {
  const auto ours = variables_we_set(plan, context);
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != "-x") continue;
    const std::string name = words[i + 1].substr(0, words[i + 1].find('='));
    const auto found = std::find_if(ours.begin(), ours.end(), [&](const auto& pair) { return pair.first == name; });
    if (found == ours.end()) continue;
    throw UsageError(fmt::format(
        "{} -x {}: popdist run sets {} itself (instance 0: {}={}); choose it with popdist run's own options "
        "(--num-instances, --num-replicas, --ipus-per-replica, --master-addr, --master-port), not -x",
        option, shown(words[i + 1]), name, name, found->second));
  }
}

// Placement: exactly the planned number of instances per host, in order, so that instance i lands
// on host i / (instances / hosts). The slots in --host are not enough: inside an allocation Open
// MPI maps by the allocation's own slots (Slurm's 3,1 for 4 tasks on 2 nodes), so the mapping is
// also given as so many processes per node, unless the user chose a mapping (or --numa-aware).
void add_placement(MpirunCommand& command, const LaunchPlan& plan, const RunOptions& options,
                   const MpirunContext& context, const MpiWords& words) {
  if (plan.explicit_hosts) {
    std::string hosts;
    for (const auto& host : plan.hosts) {
      hosts += fmt::format("{}{}:{}", hosts.empty() ? "" : ",", host.name, host.num_instances);
    }
    command.argv.insert(command.argv.end(), {"--host", hosts});
    const bool user_mapping = contains(words.global, {"--map-by", "-map-by", "--rankfile", "-rf", "--npernode",
                                                      "-npernode", "--bynode", "-bynode"});
    if (!user_mapping && !options.numa_aware) {
      command.argv.insert(command.argv.end(),
                          {"--map-by", fmt::format("ppr:{}:node", plan.hosts.front().num_instances)});
    }
  }
  bool oversubscribed = false;
  for (const auto& host : plan.hosts) {
    const std::optional<int> capacity = plan.explicit_hosts ? host.slots : std::optional<int>(context.local_cores);
    if (capacity && host.num_instances > *capacity) {
      oversubscribed = true;
      command.decisions.push_back(fmt::format("{} instances on {} which has {} {}: added --oversubscribe",
                                              host.num_instances, host.name, *capacity,
                                              plan.explicit_hosts ? "slots" : "cores"));
    }
  }
  if (oversubscribed) command.argv.push_back("--oversubscribe");
}

// design.md §8: on one host the `cm` pml has no fabric to find, and probing for one (ofi, psm,
// psm2) is most of every MPI_Init's time (a timeout per fabric library). Only when the user chose
// no pml anywhere.
void add_pml(MpirunCommand& command, const LaunchPlan& plan, const MpirunContext& context, const MpiWords& words) {
  std::optional<std::string> user_pml = user_pml_in(words.global, "--mpi-global-args");
  if (!user_pml) user_pml = user_pml_in(words.global_exports, "--mpi-global-args");
  if (!user_pml) user_pml = user_pml_in(words.local, "--mpi-local-args");
  if (!user_pml && context.env_pml) user_pml = fmt::format("OMPI_MCA_pml={} is set", *context.env_pml);
  if (plan.hosts.size() == 1 && !user_pml) {
    command.argv.insert(command.argv.end(), {"--mca", "pml", "^cm"});
    command.decisions.push_back(
        "single host and no pml chosen by you: added --mca pml ^cm (skips ~200 ms of probing for inter-node fabrics "
        "in MPI_Init)");
  } else if (plan.hosts.size() == 1) {
    command.decisions.push_back(fmt::format("single host, but {}: not adding --mca pml ^cm", *user_pml));
  }
}

// Open MPI tags each line with [jobid,rank]<stream> for several instances, unless the user chose
// an output option of their own; under Open MPI 5 the agents do, as Open MPI 4 would. Returns
// whether the agents tag.
bool add_output_tags(MpirunCommand& command, const LaunchPlan& plan, const MpirunContext& context,
                     const MpiWords& words) {
  const bool user_output_option =
      contains(words.global, {"--tag-output", "-tag-output", "--timestamp-output", "-timestamp-output",
                              "--output-filename", "-output-filename", "--xml", "-xml", "--output", "-output"});
  if (plan.num_instances == 1 || user_output_option) return false;
  if (context.agents_tag) {
    command.decisions.push_back(
        "the agents tag each output line with [1,instance]<stdout>: (Open MPI 5's --tag-output adds a space)");
    return true;
  }
  command.argv.push_back("--tag-output");
  command.decisions.push_back("added --tag-output: each output line starts with [jobid,instance]<stream>:");
  return false;
}

// design.md §12: no binding unless asked. Open MPI binds each of <= 2 processes to a core (to a
// socket above that), which starves a 2-instance job and its DataLoader workers; torchrun binds
// nothing.
void add_binding(MpirunCommand& command, const RunOptions& options, const MpirunContext& context,
                 const MpiWords& words) {
  if (options.numa_aware) {
    // PopRun's --numa-aware: instances round-robin over the NUMA nodes of their host, each bound
    // to its node (mapping by object still fills the slots of one host before the next).
    // Oversubscribed (already allowed), Open MPI must also be allowed more processes than cores on a node.
    const bool oversubscribed = contains(command.argv, {"--oversubscribe"});
    const std::string bind = oversubscribed ? "numa:overload-allowed" : "numa";
    command.argv.insert(command.argv.end(), {"--map-by", "numa", "--bind-to", bind});
    command.decisions.push_back("--numa-aware: added --map-by numa --bind-to " + bind);
  } else if (user_binds(words.global) || user_binds(words.local) || context.env_binding) {
    command.decisions.push_back("you chose a CPU binding: not adding --bind-to none");
  } else {
    command.argv.insert(command.argv.end(), {"--bind-to", "none"});
    command.decisions.push_back("added --bind-to none: every instance may run on every core (as under torchrun)");
  }
}

void add_warnings(MpirunCommand& command, const MpiWords& words) {
  if (contains(words.global, {"--map-by", "-map-by", "--rankfile", "-rf", "--host", "-host", "-H", "--hostfile",
                              "-hostfile", "--npernode", "-npernode", "--bynode", "-bynode"})) {
    command.warnings.push_back(
        "--mpi-global-args changes the placement (--map-by/--host/--rankfile/...): instances may not land where the "
        "plan says, and POPDIST_LOCAL_INSTANCE_INDEX may then disagree with mpirun's local rank");
  }
  if (contains(words.global, {"--enable-recovery", "-enable-recovery"})) {
    // Inside Slurm, Open MPI starts its daemons with `srun --kill-on-bad-exit` only without
    // recovery: with it, a dead instance's step can leave the others waiting.
    command.warnings.push_back(
        "--mpi-global-args has --enable-recovery: a dead instance no longer ends the job (and inside Slurm, Open MPI "
        "then starts its daemons without srun --kill-on-bad-exit)");
  }
}

// The end of a job (docs/guide/long-jobs.md): the grace from SIGTERM to SIGKILL, and, on this
// machine alone, Open MPI's session files in the job directory, so that two jobs started at once
// never share one (ompi#8510) and nothing is left behind. Not with hosts (the directory is on this
// machine only), nor with a tmpdir of the user's, nor a long directory (Open MPI's sockets have a
// 108-byte path limit).
void add_job_settings(MpirunCommand& command, const LaunchPlan& plan, const RunOptions& options,
                      const MpirunContext& context, const MpiWords& words) {
  command.argv.insert(command.argv.end(),
                      {"--mca", "odls_base_sigkill_timeout", std::to_string(options.grace_period)});
  constexpr std::size_t longest_session_base = 48;
  const bool user_tmpdir = contains_text(words.global, "tmpdir_base") || contains_text(words.local, "tmpdir_base");
  if (!context.job_directory.empty() && context.job_directory.size() <= longest_session_base && !user_tmpdir &&
      !plan.explicit_hosts && !context.env_tmpdir) {
    command.argv.insert(command.argv.end(), {"--mca", "orte_tmpdir_base", context.job_directory});
  }
}

// The one app context: every instance, the variables they share, the agent and the program.
void add_app_context(MpirunCommand& command, const LaunchPlan& plan, const RunOptions& options,
                     const MpirunContext& context, const MpiWords& words, bool agents_tag) {
  auto& argv = command.argv;
  argv.insert(argv.end(), {"-np", std::to_string(plan.num_instances)});
  for (const auto& name : context.forwarded) argv.insert(argv.end(), {"-x", name});
  argv.insert(argv.end(), words.global_exports.begin(), words.global_exports.end());
  if (!context.master_addr.empty()) {
    argv.insert(argv.end(), {"-x", "MASTER_ADDR=" + context.master_addr});
    argv.insert(argv.end(), {"-x", "MASTER_PORT=" + std::to_string(context.master_port)});
  }
  for (const auto& [name, value] : context.exports) argv.insert(argv.end(), {"-x", name + "=" + value});
  // Each agent reads from its environment whether the daemon signals it alone, and then passes a
  // signal on (agent/signal_relay.hpp). Open MPI 4 puts an --mca parameter there; Open MPI 5's
  // daemons (PRRTE) take it but no longer do, and a signal then never reached the program.
  if (const auto direct_only = user_direct_children_only(words.global)) {
    argv.insert(argv.end(), {"-x", "OMPI_MCA_odls_base_signal_direct_children_only=" + *direct_only});
  }
  argv.insert(argv.end(), words.local.begin(), words.local.end());
  append_agent(argv, plan, options, context, agents_tag);
}

}  // namespace

MpirunCommand build_mpirun_command(const LaunchPlan& plan, const RunOptions& options, const MpirunContext& context) {
  MpiWords words;
  words.global = launcher_words(options.mpi_global_args, "--mpi-global-args");
  words.local = launcher_words(options.mpi_local_args, "--mpi-local-args");
  words.global_exports = take_exports(words.global);
  refuse_our_variables(words.global_exports, "--mpi-global-args", plan, context);
  refuse_our_variables(words.local, "--mpi-local-args", plan, context);
  MpirunCommand command;
  if (!words.global_exports.empty()) {
    command.decisions.push_back(
        "moved the -x of --mpi-global-args into the app context (before it, Open MPI applies -x to no process)");
  }
  command.argv.push_back(context.mpirun);
  if (context.as_root) {
    // Open MPI refuses to start as root unless told explicitly.
    command.argv.push_back("--allow-run-as-root");
    command.decisions.push_back("running as root: added --allow-run-as-root");
  }
  add_placement(command, plan, options, context, words);
  add_pml(command, plan, context, words);
  const bool agents_tag = add_output_tags(command, plan, context, words);
  add_binding(command, options, context, words);
  add_job_settings(command, plan, options, context, words);
  add_warnings(command, words);
  command.argv.insert(command.argv.end(), words.global.begin(), words.global.end());
  add_app_context(command, plan, options, context, words, agents_tag);
  return command;
}

}  // namespace popdist::cli
