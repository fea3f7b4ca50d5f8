#pragma once
// Hosts that popdist run never heard, named with the reason (issue 47): their reach probes
// (reach_probe.hpp) made at the two moments a silent host matters, and only then --
//  - the launcher ended with a failure while some hosts' agents never spoke and no instance
//    failed (Open MPI's mpirun ends at once, "ORTE was unable to reliably start one or more
//    daemons", naming no host): probe_silent_hosts() after it ended;
//  - the launcher runs on while some hosts stay silent (hydra's mpiexec waits forever for a proxy
//    that could not connect back): startup_watch(), kSilentAfterOthers after another host spoke,
//    or kSilentAtStart after the start when none did. A probe that connects back leaves the job
//    alone (a slow start); one that does not ends it with kLostHostStatus.
// A job whose hosts all speak pays one look at the records per half second until they have.

#include <chrono>
#include <string>

#include "run/launch/launcher_choice.hpp"
#include "run/plan/prepared_job.hpp"
#include "run/report/reach_report.hpp"
#include "run/supervise/job_records.hpp"
#include "run/supervise/watch.hpp"

namespace popdist::cli {

/// Each probe's time to connect back, the deadline of them all (the remote shell's start
/// included), the most hosts probed at once, and the startup watch's bounds.
inline constexpr std::chrono::milliseconds kReachWithin{2000};
inline constexpr std::chrono::milliseconds kReachDeadline{5000};
inline constexpr std::size_t kMostProbes = 64;
inline constexpr std::chrono::seconds kSilentAfterOthers{5};
inline constexpr std::chrono::seconds kSilentAtStart{30};

/// What the probes of the silent hosts found, and how they were made.
struct ReachFinding {
  std::vector<ProbeResult> results;
  ReachProbing probing;
};

/// Probes the hosts of `silent` that are not this machine (its instances need no remote shell)
/// through `backend`'s remote shell, to the channel at `port`; no results under srun (no remote
/// shell) or without such hosts. Takes at most kReachDeadline.
[[nodiscard]] ReachFinding probe_hosts(const PreparedJob& job, Backend backend, const std::vector<std::string>& silent,
                                       int port);

/// The watch over the attempt's start (above): its verdict ends the launcher (SIGTERM, SIGKILL
/// after `grace`) with the report's lines on the hosts in `unreached`. `job` and `records` must outlive it.
[[nodiscard]] Watch startup_watch(const PreparedJob& job, Backend backend, const JobRecords& records, int port,
                                  std::chrono::milliseconds grace);

}  // namespace popdist::cli
