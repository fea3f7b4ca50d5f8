#pragma once
// The agent's command line: what `popdist run` writes for every instance and `popdist _instance`
// reads (agent/instance_command.cpp), so the one struct both processes agree on lives here:
//   mpirun -np N ... popdist _instance --plan I,R,D,H [options] -- program args
// The launcher fills it (run/launch/mpirun_command.cpp); the agent acts on it
// (agent/instance_agent.hpp).

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
  /// --tag-output: start each line shown with Open MPI's tag, `[1,I]<stdout>:`, for launchers
  /// whose own tag differs (hydra's `[I] `), so that every backend's output reads the same
  bool tag_output = false;
  std::string colons;               ///< --colons: 1-based positions of ':' in the program
  std::vector<std::string> program;
};

}  // namespace popdist::cli
