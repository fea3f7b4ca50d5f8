#pragma once
// The agent that `popdist run` starts on every instance, in front of the program:
//   mpirun -np N ... popdist _instance --plan I,R,D,H [options] -- program args
// One app context for the whole job, so the mpirun command does not grow with the instance count:
// the agent derives the instance's own variables (POPDIST_*, RANK, LOCAL_RANK, ...) from the rank
// that mpirun gives it (instance_plan.hpp). It then runs the program with its output passed on in
// whole lines (whole_lines.hpp), to log files with --log-dir, keeps the last lines of its stderr,
// forwards the signals that mpirun passes on, and records in the job directory how the program
// ended (instance_status.hpp). It ends as the program ended: its status, or the same signal.

#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// The hidden subcommand's name (on the instances' command lines only).
inline constexpr const char* kInstanceCommand = "_instance";

/// What `popdist run` tells every agent (the same for all instances).
struct AgentOptions {
  std::string plan;                 ///< --plan: instances,replicas,devices per replica,hosts
  std::string job_dir;              ///< --job-dir: where to record the end (empty: nowhere)
  std::string log_dir;              ///< --log-dir: this attempt's folder (empty: no log files)
  bool tee = false;                 ///< --tee: with --log-dir, show the output too
  std::optional<int> output_from;   ///< --output-from: only this instance's output is shown
  bool omp_threads = false;         ///< --omp-threads: set OMP_NUM_THREADS when unset
  std::string colons;               ///< --colons: 1-based positions of ':' in the program
  std::vector<std::string> program;
};

/// Runs the program as above; returns its status (or re-raises the signal that ended it).
[[nodiscard]] int run_instance(const AgentOptions& options);

/// The program's words with "popdist-colon" put back as ':' at `positions` ("3,8").
[[nodiscard]] std::vector<std::string> with_colons(std::vector<std::string> program, const std::string& positions);

}  // namespace popdist::cli
