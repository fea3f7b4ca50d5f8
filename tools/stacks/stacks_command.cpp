// `popdist stacks [--job-dir DIR]`: the stack report of a running `popdist run` job, on stdout.
// Without --job-dir, the one running job of this user (stack_report.hpp: find_running_jobs);
// popdist run gathers the report from every host (stack_query.hpp).
#include "stacks/stacks_command.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "common/argument_checks.hpp"
#include "stacks/stack_query.hpp"
#include "stacks/stack_report.hpp"

namespace popdist::cli {
namespace {

struct StacksOptions {
  std::string job_dir;
  double wait_seconds = 5;
};

/// Where find_running_jobs() looks.
std::string jobs_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? fmt::format("$TMPDIR ({})", tmpdir) : std::string("/tmp");
}

int report_stacks(const StacksOptions& options) {
  std::string job_dir = options.job_dir;
  if (job_dir.empty()) {
    const auto jobs = find_running_jobs();
    if (jobs.empty()) {
      fmt::print(stderr, "popdist stacks: no running popdist run job of yours (no popdist-run-* directory under "
                         "{} whose popdist-run.pid is a live process); name one with --job-dir\n",
               jobs_root());
      return 1;
    }
    if (jobs.size() > 1) {
      std::string list;
      for (const auto& job : jobs) list += fmt::format("  {}  (popdist run pid {})\n", job.directory, job.launcher_pid);
      fmt::print(stderr, "popdist stacks: {} running popdist run jobs; choose one with --job-dir:\n{}", jobs.size(),
                 list);
      return 1;
    }
    job_dir = jobs.front().directory;
  }
  const auto wait = std::chrono::milliseconds(static_cast<long long>(options.wait_seconds * 1000));
  try {
    fmt::print("{}", ask_for_stacks(job_dir, wait));
  } catch (const std::runtime_error& e) {
    fmt::print(stderr, "popdist stacks: {} (is the job still running?)\n", e.what());
    return 1;
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

std::function<int()> add_stacks_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("stacks", "Show where every Python instance of a running popdist run job is (its stacks)");
  sub->footer(
      "Asks each Python instance of the job for its stacks (SIGURG, which popdist run's start-up hook hands to\n"
      "Python's faulthandler) and prints one line per instance naming its main thread's innermost frame, then\n"
      "every instance's threads, on every host: popdist run asks each instance's agent over the job's channel.");
  auto options = std::make_shared<StacksOptions>();
  CLI::Validator existing_directory = CLI::ExistingDirectory;
  existing_directory.description("");  // the help says DIR, not DIR:DIR
  sub->add_option("--job-dir", options->job_dir,
                  "The job's directory (POPDIST_RUN_JOB_DIR) [default: your one running popdist run job]")
      ->check(existing_directory)
      ->type_name("DIR");
  sub->add_option("--wait", options->wait_seconds, "Seconds to wait for the instances' stacks")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  return [options] { return report_stacks(*options); };
}

}  // namespace popdist::cli
