#include "run/plan/prepared_job.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "job/job_directory.hpp"
#include "popdist/error.hpp"
#include "run/launch/command_length.hpp"
#include "run/options/validation.hpp"
#include "run/plan/job_variables.hpp"
#include "run/plan/machine_context.hpp"
#include "run/plan/master_endpoint.hpp"

namespace popdist::cli {
namespace {

void add_error(PreparedJob& job, std::string text) { job.notices.push_back({Notice::Kind::error, std::move(text)}); }

/// The options' own problems, then (when there are none) PopRun's effects on the job: its mpirun
/// arguments go into the options, its variables are returned.
PopRunEffects check_options(PreparedJob& job, const EnvLookup& env) {
  auto problems = option_problems(job.options);
  PopRunEffects effects = problems.empty() ? poprun_effects(job.options, env) : PopRunEffects{};
  for (auto& problem : problems) add_error(job, std::move(problem));
  if (!effects.mpi_global_args.empty()) {
    job.options.mpi_global_args.insert(job.options.mpi_global_args.begin(), effects.mpi_global_args);
  }
  job.decisions = effects.decisions;
  return effects;
}

/// The hosts and, when the line has no error so far, the plan; true when planned.
bool plan_hosts(PreparedJob& job, const EnvLookup& env) {
  try {
    job.selection = select_hosts(job.options, env);
    validate_hosts(job.options, job.selection->hosts, job.selection->source);
  } catch (const UsageError& e) {
    add_error(job, e.what());
  }
  if (has_errors(job.notices)) return false;
  const auto& options = job.options;
  job.plan = plan_launch(options.num_instances, total_replicas(options), options.ipus_per_replica,
                         job.selection->hosts);
  return true;
}

/// torchrun's MASTER_ADDR/MASTER_PORT for every instance (master_endpoint.hpp) and the channel's address.
void choose_endpoints(PreparedJob& job, const EnvLookup& env) {
  const MasterEndpoint master = choose_master(job.plan, job.options, env, real_network());
  job.context.master_addr = master.address;
  job.context.master_port = master.port;
  job.decisions.push_back(master.decision);
  job.channel_address = choose_channel_address(job.plan, real_network());
  job.decisions.push_back(job.channel_address.decision);
}

/// The mpirun context, the endpoints, and the command's own errors (e.g. an unbalanced quote in
/// --mpi-global-args, a line too long): its shape needs a plan, any plan will do to find them.
void build_context(PreparedJob& job, const PopRunEffects& effects, const EnvLookup& env, bool planned) {
  // mpirun gets PYTHONPATH with the hook from its environment and forwards it by name (-x
  // PYTHONPATH), as it does the user's own: a PopRun line's `--mpi-local-args "-x PYTHONPATH"`
  // keeps the hook too. Only a value the user spells out (-x PYTHONPATH=...) goes without it.
  const auto self = self_path();
  job.hooked_python_path = python_path_with_hook(self, env);
  const EnvLookup instance_env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "PYTHONPATH" && job.hooked_python_path) return job.hooked_python_path;
    return env(name);
  };
  job.context = machine_context(instance_env, self);
  job.context.exports = effects.exports;
  job.fixed_port = job.options.master_port.has_value() || env("MASTER_PORT").has_value();
  if (planned) choose_endpoints(job, env);
  const auto command = build_mpirun_command(planned ? job.plan : plan_launch(1, 1, 1, {}), job.options,
                                            attempt_context(job, 0, job_directory_template()));
  if (planned) {
    check_command_length(command.argv, current_environment_bytes(), exec_size_limit(), job.plan.num_instances,
                         job.options.program);
  }
}

}  // namespace

PreparedJob prepare_job(const RunOptions& parsed, const EnvLookup& env) {
  PreparedJob job;
  job.notices = parsed.notices;
  job.options = parsed;
  const PopRunEffects effects = check_options(job, env);
  const bool planned = plan_hosts(job, env);
  try {
    build_context(job, effects, env, planned);
  } catch (const UsageError& e) {
    add_error(job, e.what());
  }
  if (job.hooked_python_path) {
    job.decisions.push_back(fmt::format(
        "PYTHONPATH={}: Python instances tear torch.distributed down at exit while the interpreter is whole "
        "(POPDIST_PYTHON_EXIT_HOOK=0: off)",
        *job.hooked_python_path));
  }
  return job;
}

// Lightning and torch.distributed.is_torchelastic_launched() know torchrun by TORCHELASTIC_RUN_ID
// (without it Lightning prefers its MPI environment and ignores MASTER_ADDR/MASTER_PORT); popdist's
// own detection reads a run id "popdist-run-..." as no torchrun (a torchrun started by an instance
// gives its workers an id of its own), so Open MPI's variables stay the identity.
std::vector<std::pair<std::string, std::string>> attempt_exports(const RunOptions& options, int attempt,
                                                                 const MpirunContext& context) {
  std::vector<std::pair<std::string, std::string>> exports{
      {"POPDIST_RESTART_COUNT", std::to_string(attempt)},
      {"TORCHELASTIC_RESTART_COUNT", std::to_string(attempt)},
      {"TORCHELASTIC_MAX_RESTARTS", std::to_string(options.max_restarts)},
  };
  if (!context.master_addr.empty()) {
    exports.emplace_back("TORCHELASTIC_RUN_ID", fmt::format("popdist-run-{}", context.master_port));
    exports.emplace_back("TORCHELASTIC_USE_AGENT_STORE", "False");  // instance 0's env:// serves the store
  }
  if (!context.job_directory.empty()) exports.emplace_back("POPDIST_RUN_JOB_DIR", context.job_directory);
  return exports;
}

MpirunContext attempt_context(const PreparedJob& job, int attempt, const std::string& job_dir) {
  MpirunContext context = job.context;
  context.job_directory = job_dir;
  if (!job.options.log_dir.empty()) {
    context.log_directory =
        (std::filesystem::absolute(job.options.log_dir) / fmt::format("attempt_{}", attempt)).lexically_normal().string();
  }
  if (attempt > 0 && !job.fixed_port && !context.master_addr.empty()) context.master_port = real_network().free_port();
  for (auto& exported : attempt_exports(job.options, attempt, context)) context.exports.push_back(std::move(exported));
  return context;
}

}  // namespace popdist::cli
