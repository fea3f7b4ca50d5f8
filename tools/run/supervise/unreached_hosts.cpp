#include "run/supervise/unreached_hosts.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>

#include "common/say.hpp"
#include "run/launch/command_parts.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// The startup watch's memory between two looks.
struct StartupState {
  Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> first_heard;  ///< when a host was first heard speaking
  bool done = false;                             ///< every host spoke, or the probes were made
};

/// The hosts with instances, in the plan's order.
std::size_t hosts_with_instances(const LaunchPlan& plan) {
  std::size_t count = 0;
  for (const auto& host : plan.hosts) count += host.num_instances > 0 ? 1 : 0;
  return count;
}

/// True when the silent hosts have been silent long enough to be probed.
bool time_to_probe(StartupState& state, std::size_t silent, std::size_t hosts, Clock::time_point now) {
  if (silent < hosts && !state.first_heard) state.first_heard = now;
  if (state.first_heard) return now - *state.first_heard >= kSilentAfterOthers;
  return now - state.start >= kSilentAtStart;
}

}  // namespace

ReachFinding probe_hosts(const PreparedJob& job, Backend backend, const std::vector<std::string>& silent, int port) {
  ReachFinding finding;
  // This machine's instances are started without the remote shell, and reach the channel.
  std::vector<std::string> hosts;
  for (const auto& host : silent)
    if (!is_this_machine(host)) hosts.push_back(host);
  const auto shell = remote_shell(backend, launcher_words(job.options.mpi_global_args, "--mpi-global-args"),
                                  process_environment());
  if (shell.empty() || hosts.empty()) return finding;
  const std::string address = job.channel_address.address;
  finding.probing = {fmt::format("{}", fmt::join(shell, " ")),
                     address.find(':') != std::string::npos ? fmt::format("[{}]:{}", address, port)
                                                            : fmt::format("{}:{}", address, port),
                     kReachWithin, kReachDeadline, hosts.size() > kMostProbes ? hosts.size() - kMostProbes : 0};
  const std::vector<std::string> probed(hosts.begin(), hosts.begin() + std::min(hosts.size(), kMostProbes));
  std::vector<std::vector<std::string>> commands;
  for (const auto& host : probed) {
    commands.push_back(probe_command(shell, host, job.context.agent, address, port, kReachWithin));
  }
  finding.results = run_probes(probed, commands, Clock::now() + kReachDeadline);
  return finding;
}

Watch startup_watch(const PreparedJob& job, Backend backend, const JobRecords& records, int port,
                    std::chrono::milliseconds grace) {
  auto state = std::make_shared<StartupState>();
  return [&job, backend, &records, port, grace, state](pid_t) -> std::optional<WatchVerdict> {
    if (state->done) return std::nullopt;
    const auto silent = silent_hosts(job.plan, records.snapshot());
    state->done = silent.empty();
    if (state->done || !time_to_probe(*state, silent.size(), hosts_with_instances(job.plan), Clock::now()))
      return std::nullopt;
    state->done = true;  // probed once: a slow start that connects back is left alone
    const auto finding = probe_hosts(job, backend, silent, port);
    if (!any_unreached(finding.results)) return std::nullopt;
    std::vector<std::string> unreached;
    for (const auto& result : finding.results)
      if (result.outcome != ProbeOutcome::connected) unreached.push_back(result.host);
    say(fmt::format("host(s) {} never spoke, and their probes did not reach popdist run: ending the job",
                    fmt::join(unreached, ", ")));
    WatchVerdict verdict{kLostHostStatus, WatchVerdict::Ending::sigterm_then_sigkill, grace, {}};
    verdict.unreached = reach_report(finding.results, finding.probing);
    return verdict;
  };
}

}  // namespace popdist::cli
