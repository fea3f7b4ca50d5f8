#include "run_main.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "command_length.hpp"
#include "find_program.hpp"
#include "job_variables.hpp"
#include "host_source.hpp"
#include "instance_status.hpp"
#include "launch_plan.hpp"
#include "local_cores.hpp"
#include "master_endpoint.hpp"
#include "mpirun_command.hpp"
#include "notices.hpp"
#include "popdist/error.hpp"
#include "process_runner.hpp"
#include "shell_words.hpp"
#include "topology_table.hpp"
#include "validation.hpp"

namespace popdist::cli {
namespace {

void say(const std::string& message) { fmt::print(stderr, "popdist run: {}\n", message); }

/// This binary's path; empty when /proc cannot tell.
std::string self_path() {
  char self[4096];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  return length > 0 ? std::string(self, static_cast<std::size_t>(length)) : std::string();
}

MpirunContext machine_context(const EnvLookup& env, const std::string& self) {
  MpirunContext context;
  context.as_root = ::geteuid() == 0;
  context.local_cores = local_cores();
  context.env_pml = env("OMPI_MCA_pml");
  for (const auto& name : forwardable_variables()) {
    if (env(name)) context.forwarded.push_back(name);
  }
  // This very binary starts the instances under `_whole-lines` (the same path on every host, as
  // for the program itself).
  context.whole_lines_launcher = self;
  return context;
}

/// popdist run's start-up hook for Python instances (python_startup/sitecustomize.py), beside
/// this binary as ../share/popdist/python-startup (build tree, install and wheel alike); empty
/// when it is not there.
std::string python_startup_directory(const std::string& self) {
  const auto directory =
      std::filesystem::path(self).parent_path().parent_path() / "share" / "popdist" / "python-startup";
  std::error_code error;
  return std::filesystem::exists(directory / "sitecustomize.py", error) ? directory.lexically_normal().string() : "";
}

/// PYTHONPATH for the instances with the start-up hook first, so that Python instances tear
/// torch.distributed down at exit while the interpreter is whole (sitecustomize.py says why);
/// nullopt when the hook is not installed or turned off (POPDIST_PYTHON_EXIT_HOOK=0).
std::optional<std::string> python_path_with_hook(const std::string& self, const EnvLookup& env) {
  const auto hook = python_startup_directory(self);
  if (hook.empty() || env("POPDIST_PYTHON_EXIT_HOOK").value_or("1") == "0") return std::nullopt;
  const auto user_path = env("PYTHONPATH").value_or("");
  return user_path.empty() ? hook : hook + ":" + user_path;
}

// The command on one line (pasteable), then each instance's host and variables.
void print_command(std::FILE* out, const MpirunCommand& command, const LaunchPlan& plan, const MpirunContext& context) {
  fmt::print(out, "{}\n", shell_join(command.argv));
  for (const auto& instance : plan.instances) {
    std::string variables;
    for (const auto& [name, value] : popdist_variables(plan, instance.index)) variables += fmt::format(" {}={}", name, value);
    for (const auto& [name, value] : torchrun_variables(plan, instance.index, context.master_addr, context.master_port)) {
      variables += fmt::format(" {}={}", name, value);
    }
    fmt::print(out, "instance {} on {}:{}\n", instance.index, plan.hosts[instance.host].name, variables);
  }
  std::fflush(out);
}

}  // namespace

int run_job(const RunOptions& parsed, const EnvLookup& env) {
  // Every problem of the line is reported in one run (notices.hpp): the parser's, in command-line
  // order, then each later stage's as far as the stages before it allow.
  std::vector<Notice> notices = parsed.notices;
  const auto error = [&notices](std::string text) { notices.push_back({Notice::Kind::error, std::move(text)}); };
  auto problems = option_problems(parsed);
  const PopRunEffects effects = problems.empty() ? poprun_effects(parsed, env) : PopRunEffects{};
  for (auto& problem : problems) error(std::move(problem));
  RunOptions options = parsed;
  if (!effects.mpi_global_args.empty()) {
    options.mpi_global_args.insert(options.mpi_global_args.begin(), effects.mpi_global_args);
  }

  LaunchPlan plan;
  MpirunCommand command;
  MpirunContext context;
  std::string mpirun_path;
  std::optional<HostSelection> selection;
  try {
    selection = select_hosts(options, env);
    validate_hosts(options, selection->hosts, selection->source);
  } catch (const UsageError& e) {
    error(e.what());
  }
  if (!has_errors(notices)) {
    plan = plan_launch(options.num_instances, total_replicas(options), options.ipus_per_replica, selection->hosts);
  }
  // Where the instances record how they ended, for when mpirun hangs (instance_status.hpp); a
  // dry run starts nothing and makes none.
  std::optional<InstanceStatusDirectory> status_directory;
  if (!options.dry_run) status_directory.emplace();
  // mpirun gets PYTHONPATH with the hook from its environment and forwards it by name (-x
  // PYTHONPATH), as it does the user's own: a PopRun line's `--mpi-local-args "-x PYTHONPATH"`
  // keeps the hook too. Only a value the user spells out (-x PYTHONPATH=...) goes without it.
  const auto self = self_path();
  const auto hooked_python_path = python_path_with_hook(self, env);
  const EnvLookup instance_env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "PYTHONPATH" && hooked_python_path) return hooked_python_path;
    return env(name);
  };
  try {
    // The command's own errors (e.g. an unbalanced quote in --mpi-global-args) are usage errors
    // too; its shape needs a plan, any plan will do to find them.
    context = machine_context(instance_env, self);
    context.exports = effects.exports;
    if (status_directory) context.status_directory = status_directory->path();
    const bool planned = !has_errors(notices);
    std::string master_decision;
    if (planned) {
      // torchrun's MASTER_ADDR/MASTER_PORT for every instance (master_endpoint.hpp).
      const MasterEndpoint master = choose_master(plan, options, env, real_network());
      context.master_addr = master.address;
      context.master_port = master.port;
      master_decision = master.decision;
    }
    command = build_mpirun_command(planned ? plan : plan_launch(1, 1, 1, {}), options, context);
    if (!master_decision.empty()) command.decisions.push_back(master_decision);
    if (hooked_python_path) {
      command.decisions.push_back(fmt::format(
          "PYTHONPATH={}: Python instances tear torch.distributed down at exit while the interpreter is whole "
          "(POPDIST_PYTHON_EXIT_HOOK=0: off)",
          *hooked_python_path));
    }
    if (planned) {
      check_command_length(command.argv, current_environment_bytes(), exec_size_limit(), plan.num_instances,
                           options.program);
    }
  } catch (const UsageError& e) {
    error(e.what());
  }
  if (has_errors(notices)) {
    print_notices(stderr, notices);
    std::fputs("Run with --help for more information.\n", stderr);
    return exit_usage;
  }
  if (options.verbosity >= 1) {
    say(selection->hosts.empty()
            ? "hosts: this machine only (no --host, --hostfile or Slurm allocation)"
            : fmt::format("hosts from {}: {} host(s), {} instance(s) each", selection->source, plan.hosts.size(),
                          plan.hosts.front().num_instances));
  }
  const auto path = env("PATH").value_or("");
  const auto mpirun = find_program("mpirun", path);
  if (!mpirun) {
    say(fmt::format("mpirun not found on PATH (searched: {}); install Open MPI (e.g. openmpi-bin) or add its bin "
                    "directory to PATH",
                    path.empty() ? "nothing, PATH is empty" : fmt::format("{}", fmt::join(path_directories(path), ", "))));
    return exit_mpirun_not_found;
  }
  mpirun_path = *mpirun;

  // The warnings, once, before the job starts.
  if (options.only_output_from_instance) {
    notices.push_back({Notice::Kind::warning,
                       fmt::format("--only-output-from-instance {} hides the output of every other instance, "
                                   "including their error messages",
                                   *options.only_output_from_instance)});
  }
  for (const auto& warning : command.warnings) notices.push_back({Notice::Kind::warning, warning});
  print_notices(stderr, notices);
  if (options.verbosity >= 1) {
    say(fmt::format("mpirun: {}", mpirun_path));
    for (const auto& decision : effects.decisions) say(decision);
    for (const auto& decision : command.decisions) say(decision);
  }
  if (options.print_topology) {
    fmt::print("{}", topology_table(plan));
    std::fflush(stdout);
  }
  if (options.dry_run) {
    print_command(stdout, command, plan, context);
    return 0;
  }
  if (options.verbosity >= 2) print_command(stderr, command, plan, context);
  try {
    // mpirun reaps an ended instance at once; one left unreaped this long means mpirun hangs in
    // its own teardown (process_runner.hpp), and `popdist run` ends it rather than hang too.
    if (hooked_python_path) ::setenv("PYTHONPATH", hooked_python_path->c_str(), 1);  // for mpirun to pass on
    return run_and_wait(mpirun_path, command.argv, HangWatch{std::chrono::seconds(5), context.status_directory});
  } catch (const Error& e) {
    say(e.what());
    return 1;
  }
}

}  // namespace popdist::cli
