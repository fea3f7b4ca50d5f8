#include "run/run_main.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "channel/server.hpp"
#include "common/say.hpp"
#include "job/instance_plan.hpp"
#include "job/job_directory.hpp"
#include "job/launch_plan.hpp"
#include "job/local_cores.hpp"
#include "job/parent_death.hpp"
#include "popdist/error.hpp"
#include "run/mpirun/command_length.hpp"
#include "run/mpirun/find_program.hpp"
#include "run/mpirun/mpirun_command.hpp"
#include "run/mpirun/shell_words.hpp"
#include "run/options/notices.hpp"
#include "run/options/validation.hpp"
#include "run/plan/channel_address.hpp"
#include "run/plan/host_source.hpp"
#include "run/plan/job_variables.hpp"
#include "run/plan/master_endpoint.hpp"
#include "run/plan/next_attempt.hpp"
#include "run/plan/topology_table.hpp"
#include "run/report/failure_report.hpp"
#include "run/report/report_file.hpp"
#include "run/supervise/job_channel.hpp"
#include "run/supervise/host_liveness.hpp"
#include "run/supervise/job_records.hpp"
#include "run/supervise/process_runner.hpp"
#include "run/supervise/stack_gathering.hpp"
#include "stacks/stack_query.hpp"

namespace popdist::cli {
namespace {

/// Set by popdist.launch to its process's pid (end_with_launching_process).
constexpr const char* kLaunchParentVariable = "POPDIST_LAUNCH_PARENT";


/// This binary's path; empty when /proc cannot tell.
std::string self_path() {
  char self[4096];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  return length > 0 ? std::string(self, static_cast<std::size_t>(length)) : std::string();
}

MpirunContext machine_context(const EnvLookup& env, const std::string& self) {
  MpirunContext context;
  context.as_root = ::geteuid() == 0;
  context.omp_threads = !env("OMP_NUM_THREADS");
  context.env_binding = env("OMPI_MCA_hwloc_base_binding_policy").has_value();
  context.env_tmpdir = env("OMPI_MCA_orte_tmpdir_base") || env("OMPI_MCA_orte_local_tmpdir_base");
  context.local_cores = local_cores();
  context.env_pml = env("OMPI_MCA_pml");
  for (const auto& name : forwardable_variables()) {
    if (env(name)) context.forwarded.push_back(name);
  }
  // This very binary starts every instance as `popdist _instance` (the same path on every host, as
  // for the program itself).
  if (!self.empty()) context.agent = self;
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

// The command on one line (pasteable), then each instance's host and variables, as its agent
// will set them.
void print_command(std::FILE* out, const MpirunCommand& command, const LaunchPlan& plan, const MpirunContext& context) {
  fmt::print(out, "{}\n", shell_join(command.argv));
  for (const auto& instance : plan.instances) {
    std::string variables;
    for (const auto& [name, value] : instance_variables(plan, instance.index)) variables += fmt::format(" {}={}", name, value);
    if (!context.master_addr.empty()) {
      variables += fmt::format(" MASTER_ADDR={} MASTER_PORT={}", context.master_addr, context.master_port);
    }
    fmt::print(out, "instance {} on {}:{}\n", instance.index, plan.hosts[instance.host].name, variables);
  }
  std::fflush(out);
}

/// What every attempt of a job shares: checked once, before anything starts.
struct PreparedJob {
  RunOptions options;
  LaunchPlan plan;
  MpirunContext context;           ///< without the attempt's job directory, logs and port
  std::vector<std::string> decisions;
  std::vector<Notice> notices;
  std::optional<HostSelection> selection;
  std::optional<std::string> hooked_python_path;
  bool fixed_port = false;         ///< --master-port or MASTER_PORT: every attempt uses it
  ChannelAddress channel_address;  ///< where every host's agents reach popdist run
};

/// The variables an attempt exports to every instance besides the plan's. Lightning and
/// torch.distributed.is_torchelastic_launched() know torchrun by TORCHELASTIC_RUN_ID (without
/// it Lightning prefers its MPI environment and ignores MASTER_ADDR/MASTER_PORT); popdist's own
/// detection reads a run id "popdist-run-..." as no torchrun (a torchrun started by an instance
/// gives its workers an id of its own), so Open MPI's variables stay the identity.
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

/// The context of attempt `attempt`: its job directory, log folder and (unless fixed) a fresh port.
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

/// Checks the line and builds what every attempt shares; the notices say what is wrong.
PreparedJob prepare_job(const RunOptions& parsed, const EnvLookup& env) {
  PreparedJob job;
  job.notices = parsed.notices;
  const auto error = [&job](std::string text) { job.notices.push_back({Notice::Kind::error, std::move(text)}); };
  auto problems = option_problems(parsed);
  const PopRunEffects effects = problems.empty() ? poprun_effects(parsed, env) : PopRunEffects{};
  for (auto& problem : problems) error(std::move(problem));
  job.options = parsed;
  auto& options = job.options;
  if (!effects.mpi_global_args.empty()) {
    options.mpi_global_args.insert(options.mpi_global_args.begin(), effects.mpi_global_args);
  }
  job.decisions = effects.decisions;
  try {
    job.selection = select_hosts(options, env);
    validate_hosts(options, job.selection->hosts, job.selection->source);
  } catch (const UsageError& e) {
    error(e.what());
  }
  const bool planned = !has_errors(job.notices);
  if (planned) {
    job.plan = plan_launch(options.num_instances, total_replicas(options), options.ipus_per_replica,
                           job.selection->hosts);
  }
  // mpirun gets PYTHONPATH with the hook from its environment and forwards it by name (-x
  // PYTHONPATH), as it does the user's own: a PopRun line's `--mpi-local-args "-x PYTHONPATH"`
  // keeps the hook too. Only a value the user spells out (-x PYTHONPATH=...) goes without it.
  const auto self = self_path();
  job.hooked_python_path = python_path_with_hook(self, env);
  const EnvLookup instance_env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "PYTHONPATH" && job.hooked_python_path) return job.hooked_python_path;
    return env(name);
  };
  try {
    // The command's own errors (e.g. an unbalanced quote in --mpi-global-args) are usage errors
    // too; its shape needs a plan, any plan will do to find them.
    job.context = machine_context(instance_env, self);
    job.context.exports = effects.exports;
    job.fixed_port = options.master_port.has_value() || env("MASTER_PORT").has_value();
    if (planned) {
      // torchrun's MASTER_ADDR/MASTER_PORT for every instance (run/plan/master_endpoint.hpp).
      const MasterEndpoint master = choose_master(job.plan, options, env, real_network());
      job.context.master_addr = master.address;
      job.context.master_port = master.port;
      job.decisions.push_back(master.decision);
      job.channel_address = choose_channel_address(job.plan, real_network());
      job.decisions.push_back(job.channel_address.decision);
    }
    const auto command = build_mpirun_command(planned ? job.plan : plan_launch(1, 1, 1, {}), options,
                                              attempt_context(job, 0, job_directory_template()));
    if (planned) {
      check_command_length(command.argv, current_environment_bytes(), exec_size_limit(), job.plan.num_instances,
                           options.program);
    }
  } catch (const UsageError& e) {
    error(e.what());
  }
  if (job.hooked_python_path) {
    job.decisions.push_back(fmt::format(
        "PYTHONPATH={}: Python instances tear torch.distributed down at exit while the interpreter is whole "
        "(POPDIST_PYTHON_EXIT_HOOK=0: off)",
        *job.hooked_python_path));
  }
  return job;
}

/// The notices and -v lines before the job starts; the OMP_NUM_THREADS notice (design.md §12).
void announce(PreparedJob& job, const MpirunCommand& command, const std::string& mpirun_path) {
  const auto& options = job.options;
  if (options.only_output_from_instance) {
    job.notices.push_back({Notice::Kind::warning,
                           fmt::format("--only-output-from-instance {} hides the output of every other instance (a "
                                       "failure's error lines are still reported at the end)",
                                       *options.only_output_from_instance)});
  }
  for (const auto& warning : command.warnings) job.notices.push_back({Notice::Kind::warning, warning});
  print_notices(stderr, job.notices);
  if (job.context.omp_threads && !options.dry_run) {
    const auto& host = job.plan.hosts.front();
    say(fmt::format("OMP_NUM_THREADS is not set: each instance gets its host's cores divided among the instances on "
                    "that host (here {} / {} = {}); set OMP_NUM_THREADS to choose (1 on a host shared with other "
                    "jobs)",
                    local_cores(), host.num_instances, default_omp_threads(local_cores(), host.num_instances)));
  }
  if (options.verbosity >= 1) {
    say(job.selection->hosts.empty()
            ? "hosts: this machine only (no --host, --hostfile or Slurm allocation)"
            : fmt::format("hosts from {}: {} host(s), {} instance(s) each", job.selection->source,
                          job.plan.hosts.size(), job.plan.hosts.front().num_instances));
    say(fmt::format("mpirun: {}", mpirun_path));
    for (const auto& decision : job.decisions) say(decision);
    for (const auto& decision : command.decisions) say(decision);
  }
  if (options.print_topology) {
    fmt::print("{}", topology_table(job.plan));
    std::fflush(stdout);
  }
}

/// Under popdist.launch: the job ends with the process that called it (a Jupyter kernel killed or
/// restarted), as mpirun ends with popdist run: the kernel sends SIGTERM, the job's usual stop.
/// POPDIST_LAUNCH_PARENT is that process's pid.
void end_with_launching_process(const EnvLookup& env) {
  const auto parent = env(kLaunchParentVariable);
  if (!parent) return;
  ::unsetenv(kLaunchParentVariable);  // the instances' own popdist run, if any, is not launched
  pid_t pid = -1;
  const auto* end = parent->data() + parent->size();
  if (std::from_chars(parent->data(), end, pid).ptr != end) pid = -1;  // no process's: end now
  if (!end_with_parent(SIGTERM, pid)) std::raise(SIGTERM);
}

/// A closed stdin (`popdist run ... <&-`) becomes /dev/null: mpirun would otherwise wait on the first
/// file it opens as if it were its input, and the job would never start.
void give_closed_stdin_null() {
  if (::fcntl(STDIN_FILENO, F_GETFD) >= 0 || errno != EBADF) return;
  const int null = ::open("/dev/null", O_RDONLY);  // the lowest free descriptor: 0
  if (null > STDIN_FILENO) ::close(null);
}

/// Under a process limit (ulimit -u; root has none), a job that fails at its start may have hit
/// it: each instance is two processes (its agent and the program) plus MPI's threads.
std::string process_limit_hint() {
  struct rlimit limit {};
  if (::geteuid() == 0 || ::getrlimit(RLIMIT_NPROC, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  return fmt::format("  the process limit (ulimit -u) is {}: each instance takes two processes (its agent and the "
                     "program) and MPI's threads; a start-up failure such as \"pmix_init failed\" may be this limit\n",
                     static_cast<unsigned long long>(limit.rlim_cur));
}

/// `popdist stacks` finds a running job by this file (stacks/stack_report.hpp): our pid and the instance count.
void write_launcher_file(const std::string& job_dir, int num_instances) {
  if (job_dir.empty()) return;
  std::ofstream(job_dir + "/popdist-run.pid") << ::getpid() << " " << num_instances << "\n";
}

long long steady_ns(std::chrono::steady_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

/// How one attempt ended: its status, and the hosts --host-timeout found lost.
struct AttemptResult {
  int status = 0;
  std::vector<LostHost> lost;
};

/// What watches mpirun while it runs: its teardown, the stall watch, and the hosts' beats.
HangWatch attempt_watch(const PreparedJob& job, const JobRecords& records,
                        const std::function<std::string(std::chrono::milliseconds)>& gather,
                        std::vector<LostHost>& lost) {
  HangWatch watch;
  watch.unreaped_limit = std::chrono::seconds(5);
  watch.first_failure = [&records] { return first_failure_status(records.snapshot()); };
  watch.last_output = [&records] { return records.last_output(); };
  if (job.options.stall_timeout) {
    watch.stall_limit = std::chrono::milliseconds(static_cast<long long>(*job.options.stall_timeout * 1000));
    watch.keep_running_on_stall = job.options.stall_keep_running;
    watch.on_stall = [&job, gather] {
      say(fmt::format("no output from any instance for {} s (--stall-timeout): where each instance is",
                      *job.options.stall_timeout));
      fmt::print(stderr, "{}", gather(std::chrono::seconds(5)));
      std::fflush(stderr);
    };
  }
  if (job.options.host_timeout > 0) {
    const auto limit = std::chrono::milliseconds(static_cast<long long>(job.options.host_timeout * 1000));
    watch.lost_host_grace = std::chrono::seconds(job.options.grace_period + 2);
    watch.host_lost = [&job, &records, &lost, limit] {
      lost = silent_hosts(job.plan, records.snapshot(), records.last_heard(), std::chrono::steady_clock::now(), limit);
      if (!lost.empty()) {
        say(fmt::format("lost host {}: not heard from within --host-timeout {} s; ending the attempt",
                        describe_lost(lost), job.options.host_timeout));
      }
      return !lost.empty();
    };
  }
  return watch;
}

/// mpirun said 0, but the agents may disagree: an instance that started and never said how it ended
/// had its host go away (Slurm's --no-kill kills Open MPI's daemon on a failed node and mpirun
/// then ends with 0), and one that ended badly failed. Either way the attempt failed.
void check_success(const PreparedJob& job, const JobRecords& records, AttemptResult& result) {
  settle(records);
  const auto all = records.snapshot();
  const bool failed = std::any_of(all.begin(), all.end(), [](const InstanceRecord& r) { return r.status && *r.status != 0; });
  result.lost = hosts_gone_before_the_end(job.plan, all, records.last_heard(), std::chrono::steady_clock::now());
  if (!result.lost.empty()) {
    result.status = kLostHostStatus;
  } else if (failed) {
    result.status = 1;
  }
}

/// One attempt: a new job directory and channel, the command, mpirun, the report.
AttemptResult run_attempt(const PreparedJob& job, const std::string& mpirun_path, int attempt) {
  const JobDirectory job_dir;
  MpirunContext context = attempt_context(job, attempt, job_dir.path());
  JobRecords records(job.plan.num_instances);
  const auto channel = open_channel(job.channel_address, job.plan.hosts.size(), records, context);
  write_launcher_file(job_dir.path(), job.plan.num_instances);
  const auto command = build_mpirun_command(job.plan, job.options, context);
  if (job.options.verbosity >= 2) print_command(stderr, command, job.plan, context);
  const auto job_name = fmt::format("the job in {}", job_dir.path());
  const std::function<std::string(std::chrono::milliseconds)> gather = [&](std::chrono::milliseconds wait) {
    return channel ? gather_stack_report(*channel, records, wait, job_name)
                   : fmt::format("popdist run: {} has no channel to its instances: no stacks\n", job_name);
  };
  const StackQueryService queries(job_dir.path(), gather);
  AttemptResult result;
  const long long start = steady_ns(std::chrono::steady_clock::now());
  result.status = run_and_wait(mpirun_path, command.argv, attempt_watch(job, records, gather, result.lost));
  const bool stopped = stop_signal_received() != 0;
  if (result.status != 0) settle(records);
  if (result.status == 0 && !stopped && channel) check_success(job, records, result);
  if (result.status != 0 && result.lost.empty() && !stopped && job.options.host_timeout > 0) {
    // mpirun may end first, having seen a daemon die: a host that neither ended nor beats is lost too.
    result.lost = hosts_gone_before_the_end(job.plan, records.snapshot(), records.last_heard(),
                                            std::chrono::steady_clock::now());
    if (!result.lost.empty()) result.status = kLostHostStatus;
  }
  const auto failures = result.status != 0 ? failures_in_order(records.snapshot()) : std::vector<Failure>{};
  if (result.status != 0 && result.status != kStallStatus && !stopped) {
    const auto report =
        failure_report(failures, start, attempt, job.options.max_restarts + 1, result.status, result.lost);
    fmt::print(stderr, "{}{}", report, process_limit_hint());
    std::fflush(stderr);
  }
  if (!job.options.report_file.empty()) {
    const AttemptOutcome outcome{result.status, attempt, job.options.max_restarts + 1, stopped, start, result.lost};
    write_report_file(job.options.report_file, outcome, failures);
  }
  return result;
}

/// After a lost host: the job on the hosts left (next_attempt.hpp), re-planned and re-checked;
/// false, after saying why, when it may not shrink.
bool leave_out(PreparedJob& job, const std::vector<LostHost>& lost, std::set<std::string>& left_out,
               const EnvLookup& env) {
  for (const auto& host : lost) left_out.insert(host.host);
  const auto next = next_attempt(job.options, job.selection->hosts, left_out);
  if (!next.refusal.empty()) {
    say(fmt::format("no restart: {}", next.refusal));
    return false;
  }
  job.options = with_counts(job.options, next);
  job.selection->hosts = next.hosts;
  job.plan = plan_launch(next.num_instances, next.num_replicas, job.options.ipus_per_replica, next.hosts);
  // The first host may be gone: torchrun's master moves to the new plan's (a fixed one stays).
  const MasterEndpoint master = choose_master(job.plan, job.options, env, real_network());
  job.context.master_addr = master.address;
  job.context.master_port = master.port;
  job.channel_address = choose_channel_address(job.plan, real_network());
  say(fmt::format("left out of every later attempt: {} (lost); the job goes on with {} instance(s), {} replica(s) "
                  "on {} host(s) (--min-instances {})",
                  describe_lost(lost), next.num_instances, next.num_replicas, next.hosts.size(),
                  *job.options.min_instances));
  return true;
}

/// The attempts of --max-restarts: a failed attempt is followed by another after a short growing
/// pause, unless the user or a scheduler stopped the job (design.md §12); a lost host is left out
/// of every later attempt, or ends the job when it may not shrink (--min-instances).
int run_attempts(PreparedJob& job, const std::string& mpirun_path, const EnvLookup& env) {
  std::set<std::string> left_out;
  for (int attempt = 0;; ++attempt) {
    const auto [status, lost] = run_attempt(job, mpirun_path, attempt);
    if (status == 0 || status == kStallStatus || stop_signal_received() != 0 || attempt >= job.options.max_restarts) {
      return status;
    }
    if (!lost.empty() && !leave_out(job, lost, left_out, env)) return status;
    const int pause = std::min(1 << std::min(attempt, 5), 30);
    say(fmt::format("restarting the whole job in {} s (attempt {} of {})", pause, attempt + 2,
                    job.options.max_restarts + 1));
    std::this_thread::sleep_for(std::chrono::seconds(pause));
  }
}

}  // namespace

int run_job(const RunOptions& parsed, const EnvLookup& env) {
  // Every problem of the line is reported in one run (run/options/notices.hpp): the parser's, in command-line
  // order, then each later stage's as far as the stages before it allow.
  PreparedJob job = prepare_job(parsed, env);
  if (has_errors(job.notices)) {
    print_notices(stderr, job.notices);
    std::fputs("Run with --help for more information.\n", stderr);
    return kExitUsage;
  }
  const auto path = env("PATH").value_or("");
  const auto mpirun = find_program("mpirun", path);
  if (!mpirun) {
    say(fmt::format("mpirun not found on PATH (searched: {}); install Open MPI (e.g. openmpi-bin) or add its bin "
                    "directory to PATH",
                    path.empty() ? "nothing, PATH is empty" : fmt::format("{}", fmt::join(path_directories(path), ", "))));
    return kExitMpirunNotFound;
  }
  // The command as it will run; the job directory's name and the channel's port are made when the
  // job starts (a template and a placeholder).
  auto first_context = attempt_context(job, 0, job_directory_template());
  add_channel_variables(first_context, job.channel_address, "<port>");
  const auto first = build_mpirun_command(job.plan, job.options, first_context);
  announce(job, first, *mpirun);
  if (job.options.dry_run) {
    print_command(stdout, first, job.plan, job.context);
    return 0;
  }
  give_closed_stdin_null();
  end_with_launching_process(env);
  try {
    if (job.hooked_python_path) ::setenv("PYTHONPATH", job.hooked_python_path->c_str(), 1);  // for mpirun to pass on
    return run_attempts(job, *mpirun, env);
  } catch (const Error& e) {
    say(e.what());
    return 1;
  }
}

}  // namespace popdist::cli
