#pragma once
// --host-timeout: which hosts of the plan are lost. Every agent beats from a thread of its own
// (not its program's) over the job's channel, so a host whose running instances' agents have
// gone silent has lost its link, its processes or its daemon -- never merely a busy program. A
// host counts once it has been heard from (a slow start is mpirun's to report) and while one of
// its instances has not said how it ended. Pure: the records and the clock in, the lost out.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/supervise/job_records.hpp"

namespace popdist::cli {

/// A host of the plan that went silent.
struct LostHost {
  std::string host;                ///< as the plan names it (the user's --host)
  std::vector<int> instances;      ///< its instances that had not ended
  std::chrono::milliseconds silent{};  ///< since it was last heard from
};

/// While mpirun runs: the hosts with an instance that has not ended and nothing heard for `limit`.
[[nodiscard]] std::vector<LostHost> silent_hosts(const LaunchPlan& plan, const std::vector<InstanceRecord>& records,
                                                 const std::map<std::string, SteadyTime>& heard, SteadyTime now,
                                                 std::chrono::milliseconds limit);

/// After mpirun ended by itself (it noticed a daemon die first): the hosts with an instance that
/// neither ended nor kept beating, silent since before any instance ended -- a teardown after a
/// program's failure silences hosts only after that failure, so it never counts.
[[nodiscard]] std::vector<LostHost> hosts_gone_before_the_end(const LaunchPlan& plan,
                                                              const std::vector<InstanceRecord>& records,
                                                              const std::map<std::string, SteadyTime>& heard,
                                                              SteadyTime now);

/// "h2 (instances 2, 3; last heard 10.4 s ago)" per host, comma-separated.
[[nodiscard]] std::string describe_lost(const std::vector<LostHost>& lost);

}  // namespace popdist::cli
