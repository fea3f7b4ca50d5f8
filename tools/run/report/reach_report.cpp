#include "run/report/reach_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "run/report/failure_report.hpp"  // describe_status

namespace popdist::cli {
namespace {

double seconds(std::chrono::milliseconds time) { return std::chrono::duration<double>(time).count(); }

std::string quoted_line(const std::string& line) { return line.empty() ? "" : fmt::format(": {}", line); }

std::string unreached_line(const ProbeResult& result, const ReachProbing& probing) {
  switch (result.outcome) {
    case ProbeOutcome::no_connection:
      return fmt::format("  unreachable host: {}: started by {}, but could not connect back to popdist run at {} "
                         "within {:.1f} s (a firewall, or the wrong interface? see \"Network\" and the channel in "
                         "docs/guide/hosts.md){}\n",
                         result.host, probing.shell, probing.channel, seconds(probing.within),
                         quoted_line(result.last_line));
    case ProbeOutcome::shell_failed:
      return fmt::format("  unreachable host: {}: could not be reached by {} ({}{})\n", result.host, probing.shell,
                         describe_status(result.status), quoted_line(result.last_line));
    case ProbeOutcome::no_answer:
      return fmt::format("  unreachable host: {}: no answer through {} within {:.1f} s (the host down or not "
                         "answering, or the remote shell waiting for a password){}\n",
                         result.host, probing.shell, seconds(probing.deadline), quoted_line(result.last_line));
    case ProbeOutcome::connected: break;
  }
  return "";
}

}  // namespace

std::vector<std::string> silent_hosts(const LaunchPlan& plan, const std::vector<InstanceRecord>& records) {
  std::set<int> spoke;
  for (const auto& record : records) {
    const auto index = static_cast<std::size_t>(record.index);
    if (!record.host.empty() && index < plan.instances.size()) spoke.insert(plan.instances[index].host);
  }
  std::vector<std::string> silent;
  for (std::size_t host = 0; host < plan.hosts.size(); ++host) {
    if (plan.hosts[host].num_instances > 0 && spoke.count(static_cast<int>(host)) == 0)
      silent.push_back(plan.hosts[host].name);
  }
  return silent;
}

bool any_unreached(const std::vector<ProbeResult>& results) {
  return std::any_of(results.begin(), results.end(),
                     [](const ProbeResult& result) { return result.outcome != ProbeOutcome::connected; });
}

std::string reach_report(const std::vector<ProbeResult>& results, const ReachProbing& probing) {
  std::string text;
  std::vector<std::string> reachable;
  for (const auto& result : results) {
    if (result.outcome == ProbeOutcome::connected) reachable.push_back(result.host);
    text += unreached_line(result, probing);
  }
  if (!reachable.empty()) {
    text += fmt::format("  never spoke, but reachable: {} (started by {} and connected back to {}: the launcher "
                        "failed there for another reason, see its message above)\n",
                        fmt::join(reachable, ", "), probing.shell, probing.channel);
  }
  if (probing.not_probed > 0) {
    text += fmt::format("  not probed: {} more host(s) whose agents never spoke\n", probing.not_probed);
  }
  return text;
}

}  // namespace popdist::cli
