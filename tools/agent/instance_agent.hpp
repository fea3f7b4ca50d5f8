#pragma once
// The agent that `popdist run` starts on every instance, in front of the program:
//   mpirun -np N ... popdist _instance --plan I,R,D,H [options] -- program args
// One app context for the whole job, so the mpirun command does not grow with the instance count:
// the agent derives the instance's own variables (POPDIST_*, RANK, LOCAL_RANK, ...) from the rank
// that mpirun gives it (job/instance_plan.hpp). It then runs the program with its output passed on
// in whole lines (agent/whole_lines.hpp), to log files with --log-dir, keeps the last lines of its
// stderr, passes on the signals that reach it alone (agent/signal_relay.hpp), and tells popdist run
// over the job's channel when the program started, wrote and ended (agent/agent_channel.hpp). It
// ends as the program ended: its status, or the same signal.

#include <string>
#include <vector>

#include "job/agent_line.hpp"

namespace popdist::cli {

/// Runs the program as above; returns its status (or re-raises the signal that ended it).
[[nodiscard]] int run_instance(const AgentOptions& options);

/// The program's words with "popdist-colon" put back as ':' at `positions` ("3,8").
[[nodiscard]] std::vector<std::string> with_colons(std::vector<std::string> program, const std::string& positions);

}  // namespace popdist::cli
