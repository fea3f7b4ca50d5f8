#pragma once
// --host-timeout while mpirun runs, as a watch (watch.hpp): the attempt's records asked, every
// half second, which hosts are lost (host_liveness.hpp, Moment::mpirun_running -- the one rule,
// --host-timeout 0 included). A lost host ends the attempt at once: SIGTERM to mpirun, which ends
// the instances it can reach, and SIGKILL after a grace, since a cut link can hold its teardown
// forever.

#include <chrono>

#include "job/launch_plan.hpp"
#include "run/supervise/job_records.hpp"
#include "run/supervise/watch.hpp"

namespace popdist::cli {

/// The watch over `records` of a job planned as `plan` under --host-timeout `host_timeout` seconds:
/// once a host is lost it says so and its verdict is status kLostHostStatus, SIGTERM then SIGKILL
/// after `grace`, and the lost hosts. `plan` and `records` must outlive it.
[[nodiscard]] Watch lost_host_watch(const LaunchPlan& plan, const JobRecords& records, double host_timeout,
                                    std::chrono::milliseconds grace);

}  // namespace popdist::cli
