// `popdist run` once its line is parsed: the stages of tools/run in order -- prepare the job
// (plan/prepared_job.hpp), find the launcher of --backend, announce (report/announcement.hpp), then print the
// command (--dry-run) or run the attempts (supervise/attempt.hpp), re-planning after a lost host
// (plan/replan.hpp).
#include "run/run_main.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "common/say.hpp"
#include "job/job_directory.hpp"
#include "popdist/error.hpp"
#include "run/launch/launcher_command.hpp"
#include "run/options/notices.hpp"
#include "run/plan/prepared_job.hpp"
#include "run/plan/replan.hpp"
#include "run/report/announcement.hpp"
#include "run/supervise/attempt.hpp"
#include "run/supervise/host_liveness.hpp"
#include "run/supervise/job_channel.hpp"
#include "run/supervise/launcher_process.hpp"
#include "run/supervise/process_runner.hpp"

namespace popdist::cli {
namespace {

/// The launcher of --backend (run/launch/launcher_choice.hpp), looked for in a thread of its own:
/// its `--version` is a process start, the largest single part of popdist run's own start, and it
/// runs while the job is planned (tests/bench/README.md, where the time goes).
std::future<LauncherSearch> look_for_launcher(BackendChoice choice, const EnvLookup& env) {
  return std::async(std::launch::async, [choice, &env] { return find_launcher(choice, env); });
}

/// The launcher found; nullopt after saying why there is none.
std::optional<Launcher> found_launcher(std::future<LauncherSearch>& search) {
  auto result = search.get();
  if (!result.launcher) say(result.refusal);
  if (result.launcher && !result.passed_over.empty()) {
    say(fmt::format("passed over {}; using {} at {}", fmt::join(result.passed_over, "; "),
                    result.launcher->description, result.launcher->path));
  }
  return result.launcher;
}

/// After lost hosts: the job on the hosts left (plan/replan.hpp); false, after saying why, when
/// it may not shrink.
bool leave_out(PreparedJob& job, const std::vector<LostHost>& lost, std::set<std::string>& left_out,
               const EnvLookup& env) {
  for (const auto& host : lost) left_out.insert(host.host);
  const auto next = replan_without(job, left_out, env);
  if (!next.refusal.empty()) {
    say(fmt::format("no restart: {}", next.refusal));
    return false;
  }
  say(fmt::format("left out of every later attempt: {} (lost); the job goes on with {} instance(s), {} replica(s) "
                  "on {} host(s) (--min-instances {})",
                  describe_lost(lost), next.num_instances, next.num_replicas, next.hosts.size(),
                  *job.options.min_instances));
  return true;
}

/// The attempts of --max-restarts: a failed attempt is followed by another after a short growing
/// pause, unless the user or a scheduler stopped the job (design.md §12); a lost host is left out
/// of every later attempt, or ends the job when it may not shrink (--min-instances).
int run_attempts(PreparedJob& job, const Launcher& launcher, const EnvLookup& env) {
  std::set<std::string> left_out;
  for (int attempt = 0;; ++attempt) {
    const auto [status, lost] = run_attempt(job, launcher, attempt);
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
  // Every problem of the line is reported in one run (run/options/notices.hpp): the parser's, in
  // command-line order, then each later stage's as far as the stages before it allow.
  auto launcher_search = look_for_launcher(parsed.backend, env);
  PreparedJob job = prepare_job(parsed, env);
  if (has_errors(job.notices)) {
    print_notices(stderr, job.notices);
    std::fputs("Run with --help for more information.\n", stderr);
    return kExitUsage;
  }
  const auto launcher = found_launcher(launcher_search);
  if (!launcher) return kExitMpirunNotFound;
  // The command as it will run; the job directory's name and the channel's port are made when the
  // job starts (a template and a placeholder).
  auto first_context = attempt_context(job, 0, job_directory_template());
  add_channel_variables(first_context, job.channel_address, "<port>");
  add_fence_variables(first_context, job.options.host_timeout, job.options.grace_period);
  MpirunCommand first;
  try {
    first = build_launcher_command(*launcher, job.plan, job.options, first_context);
  } catch (const UsageError& e) {
    print_notices(stderr, {{Notice::Kind::error, e.what()}});
    return kExitUsage;
  }
  announce(job, first, launcher->path);
  if (job.options.dry_run) {
    print_command(stdout, first, job.plan, job.context);
    return 0;
  }
  give_closed_stdin_null();
  end_with_launching_process(env);
  try {
    if (job.hooked_python_path) ::setenv("PYTHONPATH", job.hooked_python_path->c_str(), 1);  // for mpirun to pass on
    return run_attempts(job, *launcher, env);
  } catch (const Error& e) {
    say(e.what());
    return 1;
  }
}

}  // namespace popdist::cli
