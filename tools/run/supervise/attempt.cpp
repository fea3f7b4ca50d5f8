#include "run/supervise/attempt.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>

#include "common/say.hpp"
#include "job/job_directory.hpp"
#include "run/launch/launcher_command.hpp"
#include "run/launch/srun_command.hpp"
#include "run/report/announcement.hpp"
#include "run/report/failure_report.hpp"
#include "run/report/report_file.hpp"
#include "run/supervise/attempt_end.hpp"
#include "run/supervise/failed_instance_watch.hpp"
#include "run/supervise/hung_teardown.hpp"
#include "run/supervise/host_liveness.hpp"
#include "run/supervise/job_channel.hpp"
#include "run/supervise/job_records.hpp"
#include "run/supervise/lost_host_watch.hpp"
#include "run/supervise/process_runner.hpp"
#include "run/supervise/slurm_failed_nodes.hpp"
#include "run/supervise/slurm_step.hpp"
#include "run/supervise/stack_gathering.hpp"
#include "run/supervise/stall_watch.hpp"
#include "run/supervise/unreached_hosts.hpp"
#include "stacks/stack_query.hpp"

namespace popdist::cli {
namespace {

/// How long one of mpirun's ended children may stay unreaped before mpirun counts as hung.
constexpr std::chrono::seconds kUnreapedLimit{5};

/// The stack report of the running attempt, waiting at most the given time for the dumps.
using Gather = std::function<std::string(std::chrono::milliseconds)>;

/// `popdist stacks` finds a running job by this file (stacks/stack_report.hpp): our pid and the instance count.
void write_launcher_file(const std::string& job_dir, int num_instances) {
  if (job_dir.empty()) return;
  std::ofstream(job_dir + "/popdist-run.pid") << ::getpid() << " " << num_instances << "\n";
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

long long steady_ns(std::chrono::steady_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

/// The watches over mpirun, in the order they are asked: a lost host, a stall, a hung teardown.
std::vector<Watch> attempt_watches(const PreparedJob& job, const JobRecords& records, const Gather& gather,
                                   const Launcher& launcher, int channel_port) {
  const auto& options = job.options;
  std::vector<Watch> watches{
      lost_host_watch(job.plan, records, options.host_timeout, std::chrono::seconds(options.grace_period + 2))};
  if (channel_port > 0) {  // hosts silent at the start: probed (no channel, nothing to hear them by)
    watches.push_back(
        startup_watch(job, launcher.backend, records, channel_port, std::chrono::seconds(options.grace_period + 2)));
  }
  if (options.stall_timeout) {
    const auto limit = std::chrono::milliseconds(static_cast<long long>(*options.stall_timeout * 1000));
    const auto report = [seconds = *options.stall_timeout, gather] {
      say(fmt::format("no output from any instance for {} s (--stall-timeout): where each instance is", seconds));
      fmt::print(stderr, "{}", gather(std::chrono::seconds(5)));
      std::fflush(stderr);
    };
    watches.push_back(stall_watch(StallWatch([&records] { return records.last_output(); }, limit), report,
                                  options.stall_keep_running));
  }
  const auto first_failure = [&records] { return first_failure_status(records.snapshot()); };
  watches.push_back(hung_teardown_watch(kUnreapedLimit, first_failure, launcher.path));
  if (launcher.backend != Backend::openmpi) {
    // hydra and srun (--kill-on-bad-exit=0) let the others run on after a failure; SIGTERM, passed
    // on by hydra or srun's step, ends them gracefully.
    const auto grace = std::chrono::seconds(options.grace_period + 2);
    // A stopped job's instances end by the stop signal: not a failure to end the job for.
    const auto unstopped_failure = [first_failure] {
      return stop_signal_received() != 0 ? std::nullopt : first_failure();
    };
    watches.push_back(failed_instance_watch(unstopped_failure, grace));
    watches.push_back(stopped_job_watch(stop_signal_received, grace));
    for (auto& watch : watches) watch = bounded_by_grace(std::move(watch), grace);
  }
  return watches;
}

/// How each launcher is told to stop (process_runner.hpp). hydra's mpiexec, SIGKILLed, ends every
/// instance through its proxies; SIGTERM it would pass on. srun turns SIGTERM into SIGKILL of its
/// tasks and passes SIGINT on (--disable-status); SIGKILLed, it would leave its step running. A
/// SIGTERM reaches srun's step through scancel (slurm_step.hpp), SIGINT to srun when that fails.
LauncherSignals launcher_signals(const Launcher& launcher, const MpirunContext& context, bool verbose) {
  switch (launcher.backend) {
    case Backend::openmpi: return {};
    case Backend::hydra: return {SIGKILL, 0, SIGKILL, {}};
    case Backend::srun: return {SIGTERM, SIGINT, SIGTERM, step_stop(launcher.path, srun_step_name(context), verbose)};
  }
  return {};
}

/// How the attempt ended: the lost-host watch's verdict, else -- unless a signal stopped the job --
/// mpirun's status checked against what the agents said.
AttemptEnd attempt_end(const PreparedJob& job, const JobRecords& records, WatchedRun run, bool stopped,
                       Backend backend) {
  // hydra's own status combines the raw statuses, and is 0 after a Ctrl-C whatever the instances
  // did (srun's is the highest); popdist's is the first failure's, as its agent told it.
  const bool status_from_agents = backend != Backend::openmpi;
  if (run.status != 0 || !stopped || status_from_agents) settle(records);
  const auto first_failure = first_failure_status(records.snapshot());
  if (status_from_agents && !run.verdict && first_failure) run.status = *first_failure;
  if (run.verdict && !run.verdict->lost.empty()) return {run.status, run.verdict->lost, {}};
  // A stall's verdict stands: instances that ignore its SIGTERM are SIGKILLed after the grace, and
  // their agents' silence then is the teardown's, not a lost host's.
  if (run.verdict && run.verdict->status == kStallStatus) return {kStallStatus, {}, {}};
  if (stopped) return {run.status, {}, {}};
  return judge_attempt_end(run.status, job.plan, hearing_now(records), host_timeout_limit(job.options.host_timeout));
}

/// After the launcher failed with no instance's failure to blame and some hosts never heard
/// (unreached_hosts.hpp): the report's lines on those hosts from their probes; "" otherwise.
std::string probe_after_failure(const PreparedJob& job, const Launcher& launcher, const WatchedRun& run,
                                const AttemptEnd& end, bool stopped, const JobRecords& records, int channel_port) {
  if (run.verdict && !run.verdict->unreached.empty()) return run.verdict->unreached;
  // A hung teardown's verdict is a launcher's failure too (hydra's, its only host unreached).
  const auto snapshot = records.snapshot();
  if (end.status == 0 || end.status == kStallStatus || stopped || channel_port <= 0 || !end.lost.empty() ||
      first_failure_status(snapshot))
    return "";
  const auto silent = silent_hosts(job.plan, snapshot);
  if (silent.empty()) return "";
  const auto finding = probe_hosts(job, launcher.backend, silent, channel_port);
  return reach_report(finding.results, finding.probing);
}

/// The failure block on stderr (not after a stall, which said its own, nor when stopped) and the report file.
/// Under srun, Slurm's word on the nodes (slurm_failed_nodes.hpp) follows the block.
void report_attempt(const PreparedJob& job, int attempt, long long start, AttemptEnd& end, bool stopped,
                    const JobRecords& records, const Launcher& launcher, const std::string& unreached) {
  const auto failures = end.status != 0 ? failures_in_order(records.snapshot()) : std::vector<Failure>{};
  const int attempts = job.options.max_restarts + 1;
  std::string slurm;
  if (launcher.backend == Backend::srun && ended_from_outside(end, failures, stopped)) {
    slurm = explain_by_slurm(launcher.path, job.plan, end, job.options.verbosity >= 1);
  }
  if (end.status != 0 && end.status != kStallStatus && !stopped) {
    fmt::print(stderr, "{}{}{}",
               failure_report(failures, start, attempt, attempts, end.status, end.lost, end.unreported, unreached),
               slurm, process_limit_hint());
    std::fflush(stderr);
  }
  if (!job.options.report_file.empty()) {
    const AttemptOutcome outcome{end.status, attempt, attempts, stopped, start, end.lost, end.unreported, unreached};
    write_report_file(job.options.report_file, outcome, failures);
  }
}

}  // namespace

AttemptResult run_attempt(const PreparedJob& job, const Launcher& launcher, int attempt) {
  const JobDirectory job_dir;
  MpirunContext context = attempt_context(job, attempt, job_dir.path());
  JobRecords records(job.plan.num_instances);
  const auto channel =
      open_channel(job.channel_address, job.plan.hosts.size(), records, context, job.options.verbosity >= 1);
  if (channel) add_fence_variables(context, job.options.host_timeout, job.options.grace_period);
  write_launcher_file(job_dir.path(), job.plan.num_instances);
  const auto command = build_launcher_command(launcher, job.plan, job.options, context);
  if (job.options.verbosity >= 2) print_command(stderr, command, job.plan, context);
  const auto job_name = fmt::format("the job in {}", job_dir.path());
  const Gather gather = [&](std::chrono::milliseconds wait) {
    return channel ? gather_stack_report(*channel, records, wait, job_name)
                   : fmt::format("popdist run: {} has no channel to its instances: no stacks\n", job_name);
  };
  const StackQueryService queries(job_dir.path(), gather);
  const int port = channel ? channel->port() : 0;
  const long long start = steady_ns(std::chrono::steady_clock::now());
  const auto run = run_watched(launcher.path, command.argv, attempt_watches(job, records, gather, launcher, port),
                               launcher_signals(launcher, context, job.options.verbosity >= 1));
  const bool stopped = stop_signal_received() != 0;
  auto end = attempt_end(job, records, run, stopped, launcher.backend);
  const auto unreached = probe_after_failure(job, launcher, run, end, stopped, records, port);
  report_attempt(job, attempt, start, end, stopped, records, launcher, unreached);
  return {end.status, end.lost};
}

}  // namespace popdist::cli
