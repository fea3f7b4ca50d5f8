#pragma once
// --host-timeout: which hosts of the plan are lost -- one decision for every moment popdist run
// asks: while mpirun runs (lost_host_watch.hpp, every half second) and once mpirun has ended by
// itself, with a failure or with 0 (attempt_end.hpp). Every host's relay beats for it from an agent's
// thread (not a program's) over the job's channel while any of its agents lives, so a host gone
// silent has lost its link, its processes or its daemon -- never merely a busy program. The rule
// (docs/guide/long-jobs.md, "When a host is lost"; design.md §13):
//  - a host is watched once it has been heard from (a slow start is mpirun's to report) and while
//    one of its instances has not said how it ended;
//  - while mpirun runs, such a host is lost when nothing was heard from it for the limit;
//  - once mpirun has ended, it is lost when it was silent since before the first instance ended
//    (or no instance said it ended): a teardown after a program's failure silences hosts only
//    after that failure, so it never counts; what mpirun's status says changes nothing here;
//  - under --host-timeout 0 no host is ever lost, at any moment.
// lost_hosts() is pure: the records, the clock and the limit in, the lost hosts out;
// hearing_now() takes the attempt's records and the clock as they stand.
// The same limit holds the other way (issue 48): popdist run beats every host down the channel,
// and an agent that has not heard it for --host-timeout ends its program (agent/host_fence.hpp);
// add_fence_variables() tells the agents the limit and the grace period.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/launch/mpirun_command.hpp"  // MpirunContext
#include "run/supervise/job_records.hpp"

namespace popdist::cli {

/// A host of the plan that went silent.
struct LostHost {
  std::string host;                ///< as the plan names it (the user's --host)
  std::vector<int> instances;      ///< its instances that had not ended
  std::chrono::milliseconds silent{};  ///< since it was last heard from
};

/// What popdist run has heard at one moment: what every instance's agent said, when each host (as
/// its relay names itself) was last heard from (any message, a beat included), and the time.
struct Hearing {
  std::vector<InstanceRecord> records;
  std::map<std::string, SteadyTime> heard;
  SteadyTime now{};
};

/// The attempt's records as they stand, and the steady clock's now.
[[nodiscard]] Hearing hearing_now(const JobRecords& records);

/// When the question is asked.
enum class Moment {
  mpirun_running,  ///< the watch
  mpirun_ended,    ///< mpirun ended by itself (not stopped by a signal), whatever its status
};

/// --host-timeout `seconds` as the limit lost_hosts() takes (0: off).
[[nodiscard]] std::chrono::milliseconds host_timeout_limit(double seconds);

/// The hosts of `plan` lost at `moment` under the limit `limit` (zero: off, none is ever lost).
[[nodiscard]] std::vector<LostHost> lost_hosts(Moment moment, const LaunchPlan& plan, const Hearing& hearing,
                                               std::chrono::milliseconds limit);

/// Exports --host-timeout `host_timeout` (seconds, 0: never fence) and --grace-period
/// `grace_period` to every agent (job/host_fence_settings.hpp).
void add_fence_variables(MpirunContext& context, double host_timeout, int grace_period);

/// "h2 (instances 2, 3; last heard 10.4 s ago)" per host, comma-separated.
[[nodiscard]] std::string describe_lost(const std::vector<LostHost>& lost);

}  // namespace popdist::cli
