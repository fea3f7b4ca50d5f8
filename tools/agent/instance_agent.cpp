#include "agent/instance_agent.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "agent/agent_channel.hpp"
#include "agent/host_fence.hpp"
#include "agent/host_job_directory.hpp"
#include "agent/signal_relay.hpp"
#include "agent/whole_lines.hpp"
#include "common/say.hpp"
#include "job/host_fence_settings.hpp"
#include "job/instance_plan.hpp"
#include "job/job_directory.hpp"
#include "job/shell_status.hpp"
#include "job/local_cores.hpp"
#include "job/parent_death.hpp"
#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

// How many lines of stderr the failure report shows.
constexpr std::size_t kKeptErrorLines = 20;

// The rank the launcher gives each process: Open MPI's, else hydra's (MPICH, Intel MPI), else
// srun's (a step without PMI: --mpi=none). Under Open MPI or hydra inside an allocation, the
// daemons' SLURM_PROCID is theirs, not the instance's: it comes last.
const char* rank_variable() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (std::getenv(name) != nullptr) return name;
  }
  return "OMPI_COMM_WORLD_RANK";
}

int rank_from_environment(int instances) {
  const char* name = rank_variable();
  const char* text = std::getenv(name);
  char* end = nullptr;
  const long rank = text != nullptr ? std::strtol(text, &end, 10) : -1;
  if (text == nullptr || *text == '\0' || *end != '\0' || rank < 0 || rank >= instances) {
    throw UsageError(std::string(name) + "=" + (text != nullptr ? text : "(unset)") +
                     ": expected the rank that the launcher (Open MPI's mpirun, hydra's mpiexec, Slurm's srun) gives each process, "
                     "0.." + std::to_string(instances - 1));
  }
  return static_cast<int>(rank);
}

void set_instance_environment(const AgentOptions& options, const LaunchPlan& plan, int rank) {
  for (const auto& [name, value] : instance_variables(plan, rank)) ::setenv(name.c_str(), value.c_str(), 1);
  if (!options.job_dir.empty()) {
    ::setenv("POPDIST_RUN_JOB_DIR", options.job_dir.c_str(), 1);
    // As torchrun does: torch's @record writes the instance's exception there (run/report/failure_report.hpp).
    ::setenv("TORCHELASTIC_ERROR_FILE", instance_file(options.job_dir, rank, ".error.json").c_str(), 1);
  }
  if (options.omp_threads && std::getenv("OMP_NUM_THREADS") == nullptr) {
    const auto& host = plan.hosts.at(static_cast<std::size_t>(plan.instances.at(static_cast<std::size_t>(rank)).host));
    ::setenv("OMP_NUM_THREADS", std::to_string(default_omp_threads(local_cores(), host.num_instances)).c_str(), 1);
  }
}

/// The instance's log file `name` under --log-dir/<rank>/; -1 (after a warning) when it cannot be made.
int open_log(const AgentOptions& options, int rank, const char* name) {
  if (options.log_dir.empty()) return -1;
  const auto folder = std::filesystem::path(options.log_dir) / std::to_string(rank);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  const auto path = (folder / name).string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) say("instance " + std::to_string(rank) + ": cannot write " + path + ": " + std::strerror(errno));
  return fd;
}

[[noreturn]] void exec_program(const std::vector<std::string>& program, int out, int err, pid_t parent) {
  // Die with the agent: if mpirun kills it with SIGKILL, no program is left behind.
  if (!end_with_parent(SIGKILL, parent)) ::_exit(137);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& word : program) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int error = errno;
  // Not say(): in the child of a forking thread, no std::string (no malloc) before _exit.
  std::fprintf(stderr, "popdist run: cannot start '%s': %s\n", program.front().c_str(), std::strerror(error));
  ::_exit(error == ENOENT ? 127 : 126);
}

void pass_output(OutputStream (&streams)[2], AgentChannel& channel) {
  while (streams[0].from >= 0 || streams[1].from >= 0) {
    pollfd fds[2];
    for (int i = 0; i < 2; ++i) fds[i] = {streams[i].from, POLLIN, 0};  // a negative fd is ignored
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (streams[i].from >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) streams[i].read_some();
    }
    if (streams[0].wrote || streams[1].wrote) channel.wrote();
    streams[0].wrote = streams[1].wrote = false;
  }
}

std::string stderr_tail(const OutputStream& errors) {
  std::string tail;
  for (const auto& line : errors.last_lines) tail += line + "\n";
  return tail;
}

/// Ends as the program ended. A signal is raised again without a core of our own: the program's
/// core (if any) is the one that matters, and the kernel has written it already.
int end_like(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return 1;
  const int signal_number = WTERMSIG(status);
  const struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(signal_number, SIG_DFL);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signal_number);
  ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  ::raise(signal_number);
  return 128 + signal_number;
}


/// The program, its output and its end; returns its wait status.
int run_program(const AgentOptions& options, int rank, std::unique_ptr<AgentChannel> channel,
                const FenceSettings& fencing) {
  const bool shown = !(options.output_from && *options.output_from != rank) && (options.log_dir.empty() || options.tee);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    say(std::string("pipe: ") + std::strerror(errno));
    return W_EXITCODE(1, 0);
  }
  const char* direct_only = std::getenv("OMPI_MCA_odls_base_signal_direct_children_only");
  relay_signals_to_program(direct_only != nullptr ? std::optional<std::string>(direct_only) : std::nullopt);
  ::signal(SIGPIPE, SIG_IGN);  // a reader that went away must not kill us before the program ends

  const pid_t self = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    say(std::string("fork failed: ") + std::strerror(errno) + " (the process limit, ulimit -u, counts this agent too)");
    return W_EXITCODE(1, 0);
  }
  if (pid == 0) exec_program(with_colons(options.program, options.colons), out_pipe[1], err_pipe[1], self);
  set_signal_target(pid);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  OutputStream streams[2];
  streams[0].from = out_pipe[0];
  streams[0].to = shown ? STDOUT_FILENO : -1;
  streams[0].log = open_log(options, rank, "stdout.log");
  streams[1].from = err_pipe[0];
  streams[1].to = shown ? STDERR_FILENO : -1;
  streams[1].log = open_log(options, rank, "stderr.log");
  streams[1].keep_lines = kKeptErrorLines;
  if (options.tag_output) {
    streams[0].tag = "[1," + std::to_string(rank) + "]<stdout>:";
    streams[1].tag = "[1," + std::to_string(rank) + "]<stderr>:";
  }
  channel->started(pid);
  auto fence = std::make_unique<HostFence>(fencing, rank, fence_host_name(),
                                           [&channel] { return channel->last_heard(); },
                                           [&channel] { channel->fencing(); });
  fence->watch(pid, streams[1].log);
  pass_output(streams, *channel);

  const int status = wait_for_program(pid, *fence);
  fence.reset();  // its thread is done with the channel and the log
  const auto ended_at = std::chrono::steady_clock::now();
  set_signal_target(0);  // reaped: its pid may be someone else's now
  for (const auto& stream : streams) {
    if (stream.log >= 0) ::close(stream.log);
  }
  channel->ended(shell_status(status), ended_at, stderr_tail(streams[1]));
  channel.reset();  // closes: a relay lingers here for its host's other agents
  return status;
}

/// In the job's teardown, the agent stays until Open MPI's daemon SIGKILLs it, at most the grace
/// period (odls_base_sigkill_timeout, which popdist run sets from --grace-period). The daemon's
/// wait between its SIGTERM and its SIGKILL ends as soon as one of its children ends (the SIGCHLD
/// cuts the sleep short, and what is left is rounded down to whole seconds: at the default 1 s,
/// nothing), so an agent that left at once would cut short the grace of every other instance of
/// its host, and end their agents before they have said how their instances ended.
void wait_out_the_grace_period() {
  const char* text = std::getenv("OMPI_MCA_odls_base_sigkill_timeout");
  char* end = nullptr;
  const long seconds = text != nullptr ? std::strtol(text, &end, 10) : 1;
  const bool valid = text == nullptr || (*text != '\0' && *end == '\0' && seconds >= 0);
  std::this_thread::sleep_for(std::chrono::seconds(valid ? seconds : 1));
}

}  // namespace

std::vector<std::string> with_colons(std::vector<std::string> program, const std::string& positions) {
  std::stringstream list(positions);
  for (std::string item; std::getline(list, item, ',');) {
    const auto position = std::strtoul(item.c_str(), nullptr, 10);
    if (position >= 1 && position <= program.size()) program[position - 1] = ":";
  }
  return program;
}

int run_instance(const AgentOptions& options) {
  if (options.program.empty()) {
    say("_instance: no program");
    return 2;
  }
  LaunchPlan plan;
  int rank = 0;
  try {
    plan = plan_from_argument(options.plan);
    rank = rank_from_environment(plan.num_instances);
  } catch (const UsageError& e) {
    say(std::string("_instance: ") + e.what());
    return 2;
  }
  // Die with mpirun (or its daemon): killed by SIGKILL, it can forward nothing (issue: instances
  // that never write would otherwise run on).
  if (!end_with_parent(SIGKILL, ::getppid())) return 137;
  FenceSettings fencing;
  try {
    fencing = fence_settings(process_environment());
  } catch (const std::invalid_argument& e) {
    say(std::string("_instance: ") + e.what());
    return 2;
  }
  ::unsetenv(kHostTimeoutVariable);  // the agent's, not the program's
  ::unsetenv(kGracePeriodVariable);
  HostJobDirectory job_dir(options.job_dir, rank);
  set_instance_environment(options, plan, rank);
  // Before the fork: the program must not inherit the channel's secret.
  const int status = run_program(options, rank, std::make_unique<AgentChannel>(rank, options.job_dir), fencing);
  job_dir.tidy();  // before end_like(), which may end this process by the program's signal
  if (asked_to_end()) wait_out_the_grace_period();
  return end_like(status);
}

}  // namespace popdist::cli
