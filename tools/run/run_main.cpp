#include "run_main.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>

#include "command_length.hpp"
#include "find_program.hpp"
#include "host_source.hpp"
#include "launch_plan.hpp"
#include "local_cores.hpp"
#include "master_endpoint.hpp"
#include "mpirun_command.hpp"
#include "popdist/error.hpp"
#include "process_runner.hpp"
#include "shell_words.hpp"
#include "topology_table.hpp"
#include "validation.hpp"

namespace popdist::cli {
namespace {

void say(const std::string& message) { fmt::print(stderr, "popdist run: {}\n", message); }

MpirunContext machine_context(const EnvLookup& env) {
  MpirunContext context;
  context.as_root = ::geteuid() == 0;
  context.local_cores = local_cores();
  context.env_pml = env("OMPI_MCA_pml");
  for (const auto& name : forwardable_variables()) {
    if (env(name)) context.forwarded.push_back(name);
  }
  // This very binary starts the instances under `_whole-lines` (the same path on every host, as
  // for the program itself).
  char self[4096];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (length > 0) context.whole_lines_launcher.assign(self, static_cast<std::size_t>(length));
  return context;
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

int run_job(const RunOptions& options, const EnvLookup& env) {
  LaunchPlan plan;
  MpirunCommand command;
  MpirunContext context;
  std::string mpirun_path;
  try {
    validate_options(options);
    const HostSelection selection = select_hosts(options, env);
    validate_hosts(options, selection.hosts, selection.source);
    plan = plan_launch(options.num_instances, total_replicas(options), options.ipus_per_replica, selection.hosts);
    if (options.verbosity >= 1) {
      say(selection.hosts.empty()
              ? "hosts: this machine only (no --host, --hostfile or Slurm allocation)"
              : fmt::format("hosts from {}: {} host(s), {} instance(s) each", selection.source, plan.hosts.size(),
                            plan.hosts.front().num_instances));
    }
    // The command first: its errors (e.g. an unbalanced quote in --mpi-global-args) are usage
    // errors, reported even where mpirun is missing.
    context = machine_context(env);
    const MasterEndpoint master = choose_master(plan, options, env, real_network());
    context.master_addr = master.address;
    context.master_port = master.port;
    command = build_mpirun_command(plan, options, context);
    command.decisions.push_back(master.decision);
    check_command_length(command.argv, current_environment_bytes(), exec_size_limit(), plan.num_instances,
                         options.program);
    const auto path = env("PATH").value_or("");
    const auto mpirun = find_program("mpirun", path);
    if (!mpirun) {
      say(fmt::format("mpirun not found on PATH (searched: {}); install Open MPI (e.g. openmpi-bin) or add its bin "
                      "directory to PATH",
                      path.empty() ? "nothing, PATH is empty" : fmt::format("{}", fmt::join(path_directories(path), ", "))));
      return exit_mpirun_not_found;
    }
    mpirun_path = *mpirun;
  } catch (const UsageError& e) {
    // The same shape as the parser's errors (argument_checks.hpp), in one write.
    say(fmt::format("error: {}\nRun with --help for more information.", e.what()));
    return exit_usage;
  }

  if (options.only_output_from_instance) {
    say(fmt::format("warning: --only-output-from-instance {} hides the output of every other instance, including "
                    "their error messages",
                    *options.only_output_from_instance));
  }
  for (const auto& warning : command.warnings) say("warning: " + warning);
  if (options.verbosity >= 1) {
    say(fmt::format("mpirun: {}", mpirun_path));
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
    constexpr auto mpirun_unreaped_limit = std::chrono::seconds(5);
    return run_and_wait(mpirun_path, command.argv, mpirun_unreaped_limit);
  } catch (const Error& e) {
    say(e.what());
    return 1;
  }
}

}  // namespace popdist::cli
