#include "run/report/announcement.hpp"

#include <fmt/format.h>

#include "common/say.hpp"
#include "job/instance_plan.hpp"
#include "job/local_cores.hpp"
#include "run/launch/shell_words.hpp"
#include "run/plan/topology_table.hpp"

namespace popdist::cli {
namespace {

/// The job's notices with what only the command knows: its warnings, --only-output-from-instance.
std::vector<Notice> notices_to_print(const PreparedJob& job, const MpirunCommand& command) {
  auto notices = job.notices;
  if (job.options.only_output_from_instance) {
    notices.push_back({Notice::Kind::warning,
                       fmt::format("--only-output-from-instance {} hides the output of every other instance (a "
                                   "failure's error lines are still reported at the end)",
                                   *job.options.only_output_from_instance)});
  }
  for (const auto& warning : command.warnings) notices.push_back({Notice::Kind::warning, warning});
  return notices;
}

void say_omp_threads(const PreparedJob& job) {
  const auto& host = job.plan.hosts.front();
  say(fmt::format("OMP_NUM_THREADS is not set: each instance gets its host's cores divided among the instances on "
                  "that host (here {} / {} = {}); set OMP_NUM_THREADS to choose (1 on a host shared with other "
                  "jobs)",
                  local_cores(), host.num_instances, default_omp_threads(local_cores(), host.num_instances)));
}

void say_decisions(const PreparedJob& job, const MpirunCommand& command, const std::string& mpirun_path) {
  say(job.selection->hosts.empty()
          ? "hosts: this machine only (no --host, --hostfile or Slurm allocation)"
          : fmt::format("hosts from {}: {} host(s), {} instance(s) each", job.selection->source, job.plan.hosts.size(),
                        job.plan.hosts.front().num_instances));
  say(command.launcher.empty() ? fmt::format("mpirun: {}", mpirun_path) : "backend " + command.launcher);
  for (const auto& decision : job.decisions) say(decision);
  for (const auto& decision : command.decisions) say(decision);
}

}  // namespace

void announce(const PreparedJob& job, const MpirunCommand& command, const std::string& mpirun_path) {
  print_notices(stderr, notices_to_print(job, command));
  if (job.context.omp_threads && !job.options.dry_run) say_omp_threads(job);
  if (job.options.verbosity >= 1) say_decisions(job, command, mpirun_path);
  // The backend beside the command --dry-run prints (stdout stays the command and the instances).
  if (job.options.verbosity == 0 && job.options.dry_run && !command.launcher.empty()) say("backend " + command.launcher);
  if (job.options.print_topology) {
    fmt::print("{}", topology_table(job.plan));
    std::fflush(stdout);
  }
}

void print_command(std::FILE* out, const MpirunCommand& command, const LaunchPlan& plan,
                   const MpirunContext& context) {
  fmt::print(out, "{}\n", shell_join(command.argv));
  for (const auto& instance : plan.instances) {
    std::string variables;
    for (const auto& [name, value] : instance_variables(plan, instance.index)) {
      variables += fmt::format(" {}={}", name, value);
    }
    if (!context.master_addr.empty()) {
      variables += fmt::format(" MASTER_ADDR={} MASTER_PORT={}", context.master_addr, context.master_port);
    }
    fmt::print(out, "instance {} on {}:{}\n", instance.index, plan.hosts[instance.host].name, variables);
  }
  std::fflush(out);
}

}  // namespace popdist::cli
