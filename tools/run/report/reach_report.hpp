#pragma once
// What the failure report says about hosts whose agents never spoke, from their reach probes
// (run/supervise/reach_probe.hpp), root cause first: one line per host that could not be reached
// by the remote shell, or started but could not connect back to the channel, or did not answer;
// then the hosts that were reachable (their launcher's daemon failed for another reason: see the
// launcher's own message). Pure: the results in, the lines out (tests/tools/run/reach_report).

#include <chrono>
#include <string>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/supervise/job_records.hpp"
#include "run/supervise/reach_probe.hpp"

namespace popdist::cli {

/// How the probes were made, as the lines say it.
struct ReachProbing {
  std::string shell;                   ///< the remote shell, as one text ("ssh", "/path/agent.sh")
  std::string channel;                 ///< "address:port" of popdist run's channel
  std::chrono::milliseconds within{};  ///< each probe's time to connect back
  std::chrono::milliseconds deadline{};  ///< the probes' deadline, remote shell included
  std::size_t not_probed = 0;          ///< silent hosts left out (beyond the most probed)
};

/// The hosts of `plan`, in its order, none of whose instances' agents said anything. Pure.
[[nodiscard]] std::vector<std::string> silent_hosts(const LaunchPlan& plan, const std::vector<InstanceRecord>& records);

/// True when some probe did not connect back: a host that cannot reach popdist run.
[[nodiscard]] bool any_unreached(const std::vector<ProbeResult>& results);

/// The report's lines on `results` ("" for none), each starting with two spaces.
[[nodiscard]] std::string reach_report(const std::vector<ProbeResult>& results, const ReachProbing& probing);

}  // namespace popdist::cli
