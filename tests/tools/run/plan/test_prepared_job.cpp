// The prepared job (run/plan/prepared_job.hpp, machine_context.hpp, replan.hpp): the notices of a
// line, what every attempt exports and where its files go, the Python start-up hook, and the job
// re-planned without a lost host. On this machine only: loopback, no host name resolved.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "run/plan/machine_context.hpp"
#include "run/plan/prepared_job.hpp"
#include "run/plan/replan.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using namespace popdist::cli;
using popdist::lookup_in;

namespace {

RunOptions line(int instances) {
  RunOptions options;
  options.num_instances = instances;
  options.program = {"true"};
  return options;
}

std::vector<std::string> errors(const PreparedJob& job) {
  std::vector<std::string> texts;
  for (const auto& notice : job.notices) {
    if (notice.kind == Notice::Kind::error) texts.push_back(notice.text);
  }
  return texts;
}

std::optional<std::string> exported(const std::vector<std::pair<std::string, std::string>>& exports,
                                    const std::string& name) {
  for (const auto& [key, value] : exports) {
    if (key == name) return value;
  }
  return std::nullopt;
}

/// Two hosts that are this machine by their names, and a master on loopback (nothing resolved
/// through a network).
RunOptions on_two_local_hosts() {
  auto options = line(4);
  options.host_lists = {"localhost,127.0.0.1"};
  options.master_addr = "127.0.0.1";
  options.max_restarts = 1;
  return options;
}

}  // namespace

TEST_CASE("prepare_job: a good line is planned, with its master and channel decided", "[prepared_job]") {
  const auto job = prepare_job(line(2), lookup_in({}));
  CHECK(errors(job).empty());
  CHECK(job.plan.num_instances == 2);
  CHECK(job.context.master_addr == "127.0.0.1");
  CHECK(job.context.master_port > 0);
  CHECK_FALSE(job.fixed_port);
  CHECK(job.channel_address.loopback);
  REQUIRE(job.decisions.size() >= 2);
  CHECK_THAT(job.decisions[0], StartsWith("torchrun's contract: MASTER_ADDR=127.0.0.1"));
  CHECK_THAT(job.decisions[1], StartsWith("the job's channel:"));
  CHECK(prepare_job(line(2), lookup_in({{"MASTER_PORT", "29400"}})).fixed_port);
}

TEST_CASE("prepare_job: every problem of the line at once, the parser's notices first", "[prepared_job]") {
  auto options = line(2);
  options.num_replicas = 3;               // the options' own problem
  options.host_lists = {"hostA,hostA"};   // the hosts' problem
  options.notices = {{Notice::Kind::ignored, "--vipu-server-host 'x' (no V-IPU here)"}};
  const auto job = prepare_job(options, lookup_in({}));
  REQUIRE(job.notices.size() == 3);
  CHECK(job.notices[0].kind == Notice::Kind::ignored);
  const auto problems = errors(job);
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[0], Contains("--num-replicas 3 is not divisible by --num-instances 2"));
  CHECK_THAT(problems[1], Contains("hostA"));
}

TEST_CASE("prepare_job: the command's own errors count even when nothing could be planned", "[prepared_job]") {
  auto options = line(2);
  options.num_replicas = 3;
  options.mpi_global_args = {"--mca btl 'tcp"};
  const auto problems = errors(prepare_job(options, lookup_in({})));
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[1], Contains("quote"));
}

TEST_CASE("attempt_exports: the attempt, the restarts, torchrun's run id, the job directory", "[prepared_job]") {
  auto options = line(2);
  options.max_restarts = 3;
  MpirunContext context;
  auto exports = attempt_exports(options, 2, context);
  CHECK(exports == std::vector<std::pair<std::string, std::string>>{{"POPDIST_RESTART_COUNT", "2"},
                                                                    {"TORCHELASTIC_RESTART_COUNT", "2"},
                                                                    {"TORCHELASTIC_MAX_RESTARTS", "3"}});
  context.master_addr = "10.0.0.1";
  context.master_port = 29400;
  context.job_directory = "/tmp/popdist-run-abc";
  exports = attempt_exports(options, 0, context);
  CHECK(exported(exports, "TORCHELASTIC_RUN_ID") == "popdist-run-29400");
  CHECK(exported(exports, "TORCHELASTIC_USE_AGENT_STORE") == "False");
  CHECK(exported(exports, "POPDIST_RUN_JOB_DIR") == "/tmp/popdist-run-abc");
}

TEST_CASE("attempt_context: the attempt's directory, logs and exports, a fixed port stays", "[prepared_job]") {
  auto options = line(2);
  options.log_dir = "logs";
  options.master_port = 29400;
  const auto job = prepare_job(options, lookup_in({}));
  REQUIRE(errors(job).empty());
  const auto context = attempt_context(job, 1, "/tmp/popdist-run-xyz");
  CHECK(context.job_directory == "/tmp/popdist-run-xyz");
  CHECK(context.log_directory == (std::filesystem::current_path() / "logs" / "attempt_1").string());
  CHECK(context.master_port == 29400);
  CHECK(exported(context.exports, "POPDIST_RESTART_COUNT") == "1");
  CHECK(exported(context.exports, "POPDIST_RUN_JOB_DIR") == "/tmp/popdist-run-xyz");
  CHECK(exported(job.context.exports, "POPDIST_RESTART_COUNT") == std::nullopt);  // the job's own stays clean
}

TEST_CASE("python_path_with_hook: the hook beside the binary first, the user's path after", "[prepared_job]") {
  const auto root = std::filesystem::temp_directory_path() / ("popdist-hook-test-" + std::to_string(::getpid()));
  const auto hook = root / "share" / "popdist" / "python-startup";
  std::filesystem::create_directories(hook);
  std::ofstream(hook / "sitecustomize.py") << "\n";
  const auto self = (root / "bin" / "popdist").string();
  CHECK(python_path_with_hook(self, lookup_in({})) == hook.string());
  CHECK(python_path_with_hook(self, lookup_in({{"PYTHONPATH", "/mine"}})) == hook.string() + ":/mine");
  CHECK(python_path_with_hook(self, lookup_in({{"POPDIST_PYTHON_EXIT_HOOK", "0"}})) == std::nullopt);
  CHECK(python_path_with_hook((root / "elsewhere" / "x" / "popdist").string(), lookup_in({})) == std::nullopt);
  std::filesystem::remove_all(root);
}

TEST_CASE("machine_context: this binary as the agent, the variables to forward", "[prepared_job]") {
  const auto context = machine_context(lookup_in({{"PATH", "/usr/bin"}}), "/opt/popdist/bin/popdist");
  CHECK(context.agent == "/opt/popdist/bin/popdist");
  CHECK(context.omp_threads);  // OMP_NUM_THREADS unset: the agents set it
  CHECK(std::find(context.forwarded.begin(), context.forwarded.end(), "PATH") != context.forwarded.end());
  CHECK(machine_context(lookup_in({{"OMP_NUM_THREADS", "2"}}), "").agent == "popdist");
}

TEST_CASE("replan_without: the job on the hosts left, or a refusal that leaves it as it was", "[prepared_job]") {
  auto job = prepare_job(on_two_local_hosts(), lookup_in({}));
  REQUIRE(errors(job).empty());
  REQUIRE(job.plan.hosts.size() == 2);
  // Without --min-instances the job does not shrink.
  auto next = replan_without(job, {"localhost"}, lookup_in({}));
  CHECK_THAT(next.refusal, Contains("--min-instances"));
  CHECK(job.plan.num_instances == 4);
  job.options.min_instances = 2;
  next = replan_without(job, {"localhost"}, lookup_in({}));
  CHECK(next.refusal.empty());
  CHECK(job.options.num_instances == 2);
  CHECK(job.plan.num_instances == 2);
  REQUIRE(job.plan.hosts.size() == 1);
  CHECK(job.plan.hosts[0].name == "127.0.0.1");
  CHECK(job.selection->hosts.size() == 1);
  CHECK(job.context.master_addr == "127.0.0.1");
}
