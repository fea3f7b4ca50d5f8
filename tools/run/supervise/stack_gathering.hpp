#pragma once
// The stack report of a running attempt, from every host: popdist run asks every instance's agent
// over the job's channel (a Request to all), gathers their StackDumps in the job's records for
// the wait, and formats them as `popdist stacks` prints them (stacks/stack_report.hpp). Used by
// --stall-timeout and by `popdist stacks` (stacks/stack_query.hpp).

#include <chrono>
#include <string>
#include <vector>

#include "channel/server.hpp"
#include "run/supervise/job_records.hpp"
#include "stacks/stack_report.hpp"

namespace popdist::cli {

/// Each instance's stacks as its record holds them (after a Request and its wait). Pure.
[[nodiscard]] std::vector<InstanceStacks> stacks_from_records(const std::vector<InstanceRecord>& records);

/// Asks every agent, waits at most `wait` (plus a moment for the dumps to travel) and returns the
/// report; `job` names the job on its first line. Not reentrant: one gathering at a time.
[[nodiscard]] std::string gather_stack_report(channel::Server& server, JobRecords& records,
                                              std::chrono::milliseconds wait, const std::string& job);

}  // namespace popdist::cli
