#include "mpirun_command.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "argument_text.hpp"
#include "instance_status.hpp"
#include "popdist/error.hpp"
#include "shell_words.hpp"
#include "whole_lines.hpp"

namespace popdist::cli {
namespace {

bool contains(const std::vector<std::string>& words, std::initializer_list<std::string_view> any_of) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& word) {
    return std::find(any_of.begin(), any_of.end(), word) != any_of.end();
  });
}

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

// The words of --mpi-global-args or --mpi-local-args. A ':' (or --app) there would start another
// app context: a program popdist did not plan, run with none of popdist's variables.
std::vector<std::string> mpirun_words(const std::vector<std::string>& texts, std::string_view option) {
  std::vector<std::string> words;
  for (const auto& text : texts) {
    auto split = split_shell_words(text, option);
    for (const auto& word : split) {
      if (word == ":" || word == "--app" || word == "-app") {
        throw UsageError(fmt::format("{} {}: '{}' would start another mpirun app context; popdist run starts exactly "
                                     "one per instance (put the program after '--')",
                                     option, shown(text), word));
      }
    }
    words.insert(words.end(), split.begin(), split.end());
  }
  return words;
}

// Open MPI's mpirun reads a ':' anywhere on its command line, even among a program's arguments, as
// the start of another app context. Such words travel as placeholders, and a shell in front of the
// program puts them back (by position, so no argument of the program can be mistaken for one).
void append_program(std::vector<std::string>& argv, const std::vector<std::string>& program) {
  std::string positions;
  for (std::size_t i = 0; i < program.size(); ++i) {
    if (program[i] == ":") positions += fmt::format("{}{}", positions.empty() ? "" : ",", i + 1);
  }
  if (positions.empty()) {
    argv.insert(argv.end(), program.begin(), program.end());
    return;
  }
  argv.insert(argv.end(), {"/bin/sh", "-c",
                           "positions=$1; shift; i=0; n=$#; for word do i=$((i+1)); "
                           "case ,$positions, in *,$i,*) word=: ;; esac; set -- \"$@\" \"$word\"; done; "
                           "shift $n; exec \"$@\"",
                           "popdist-colons", positions});
  for (const auto& word : program) argv.push_back(word == ":" ? "popdist-colon" : word);
}

}  // namespace

const std::vector<std::string>& forwardable_variables() {
  static const std::vector<std::string> names{"PATH",          "LD_LIBRARY_PATH",   "PYTHONPATH",
                                              "POPDIST_LOG_LEVEL", "POPDIST_SYNC_TIMEOUT"};
  return names;
}

MpirunCommand build_mpirun_command(const LaunchPlan& plan, const RunOptions& options, const MpirunContext& context) {
  MpirunCommand command;
  auto& argv = command.argv;
  std::vector<std::string> global_args = mpirun_words(options.mpi_global_args, "--mpi-global-args");
  const std::vector<std::string> local_args = mpirun_words(options.mpi_local_args, "--mpi-local-args");
  const auto global_exports = take_exports(global_args);
  if (!global_exports.empty()) {
    command.decisions.push_back(
        "moved the -x of --mpi-global-args into every app context (before the first context, Open MPI applies -x to "
        "that context only)");
  }

  argv.push_back(context.mpirun);
  if (context.as_root) {
    // Open MPI refuses to start as root unless told explicitly.
    argv.push_back("--allow-run-as-root");
    command.decisions.push_back("running as root: added --allow-run-as-root");
  }

  // Placement: exactly the planned number of slots per host, so that Open MPI's by-slot mapping
  // fills the hosts in order and instance i lands on host i / (instances / hosts).
  if (plan.explicit_hosts) {
    std::string hosts;
    for (const auto& host : plan.hosts) {
      hosts += fmt::format("{}{}:{}", hosts.empty() ? "" : ",", host.name, host.num_instances);
    }
    argv.push_back("--host");
    argv.push_back(hosts);
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
  if (oversubscribed) argv.push_back("--oversubscribe");

  // DESIGN.md 8: on one host the `cm` pml has no fabric to find, and probing for one (ofi, psm,
  // psm2) is most of every MPI_Init's time (a timeout per fabric library). Only when the user chose
// no pml anywhere.
  std::optional<std::string> user_pml = user_pml_in(global_args, "--mpi-global-args");
  if (!user_pml) user_pml = user_pml_in(global_exports, "--mpi-global-args");
  if (!user_pml) user_pml = user_pml_in(local_args, "--mpi-local-args");
  if (!user_pml && context.env_pml) user_pml = fmt::format("OMPI_MCA_pml={} is set", *context.env_pml);
  if (plan.hosts.size() == 1 && !user_pml) {
    argv.insert(argv.end(), {"--mca", "pml", "^cm"});
    command.decisions.push_back(
        "single host and no pml chosen by you: added --mca pml ^cm (skips ~200 ms of probing for inter-node fabrics "
        "in MPI_Init)");
  } else if (plan.hosts.size() == 1) {
    command.decisions.push_back(fmt::format("single host, but {}: not adding --mca pml ^cm", *user_pml));
  }

  const bool user_output_option =
      contains(global_args, {"--tag-output", "-tag-output", "--timestamp-output", "-timestamp-output",
                             "--output-filename", "-output-filename", "--xml", "-xml"});
  bool tagged = contains(global_args, {"--tag-output", "-tag-output", "--timestamp-output", "-timestamp-output"});
  if (plan.num_instances > 1 && !user_output_option) {
    argv.push_back("--tag-output");
    tagged = true;
    command.decisions.push_back("added --tag-output: each output line starts with [jobid,instance]<stream>:");
  }
  // Open MPI tags what each read of an instance's pipe returns: lines must arrive whole.
  const bool whole_lines = tagged && !context.whole_lines_launcher.empty();
  if (whole_lines) {
    command.decisions.push_back(fmt::format("output is tagged: each instance runs under {} {} so that its lines reach "
                                            "Open MPI whole (one tag per line)",
                                            context.whole_lines_launcher, whole_lines_command));
  }

  if (options.numa_aware) {
    // PopRun's --numa-aware: instances round-robin over the NUMA nodes of their host, each bound
    // to its node (mapping by object still fills the slots of one host before the next).
    argv.insert(argv.end(), {"--map-by", "numa", "--bind-to", "numa"});
    command.decisions.push_back("--numa-aware: added --map-by numa --bind-to numa");
  }

  if (contains(global_args, {"--map-by", "-map-by", "--rankfile", "-rf", "--host", "-host", "-H", "--hostfile",
                             "-hostfile", "--npernode", "-npernode", "--bynode", "-bynode"})) {
    command.warnings.push_back(
        "--mpi-global-args changes the placement (--map-by/--host/--rankfile/...): instances may not land where the "
        "plan says, and POPDIST_LOCAL_INSTANCE_INDEX may then disagree with mpirun's local rank");
  }
  if (contains(global_args, {"--enable-recovery", "-enable-recovery"})) {
    // Inside Slurm, Open MPI starts its daemons with `srun --kill-on-bad-exit` only without
    // recovery: with it, a dead instance's step can leave the others waiting.
    command.warnings.push_back(
        "--mpi-global-args has --enable-recovery: a dead instance no longer ends the job (and inside Slurm, Open MPI "
        "then starts its daemons without srun --kill-on-bad-exit)");
  }
  argv.insert(argv.end(), global_args.begin(), global_args.end());

  for (const auto& instance : plan.instances) {
    if (instance.index > 0) argv.push_back(":");
    argv.insert(argv.end(), {"-np", "1"});
    for (const auto& name : context.forwarded) argv.insert(argv.end(), {"-x", name});
    argv.insert(argv.end(), global_exports.begin(), global_exports.end());
    for (const auto& [name, value] : popdist_variables(plan, instance.index)) {
      argv.insert(argv.end(), {"-x", name + "=" + value});
    }
    if (!context.master_addr.empty()) {
      for (const auto& [name, value] : torchrun_variables(plan, instance.index, context.master_addr, context.master_port)) {
        argv.insert(argv.end(), {"-x", name + "=" + value});
      }
    }
    for (const auto& [name, value] : context.exports) argv.insert(argv.end(), {"-x", name + "=" + value});
    argv.insert(argv.end(), local_args.begin(), local_args.end());
    if (options.only_output_from_instance && *options.only_output_from_instance != instance.index) {
      // Open MPI has no per-rank output switch: the other instances run under a shell that sends
      // their stdout and stderr to /dev/null (their exit status still counts).
      argv.insert(argv.end(), {"/bin/sh", "-c", "exec \"$@\" >/dev/null 2>&1", "popdist-silenced"});
    } else if (whole_lines) {
      argv.insert(argv.end(), {context.whole_lines_launcher, whole_lines_command});
      if (!context.status_directory.empty()) {
        argv.insert(argv.end(), {"--status-file", instance_status_file(context.status_directory, instance.index)});
      }
      argv.push_back("--");
    }
    append_program(argv, options.program);
  }
  return command;
}

}  // namespace popdist::cli
