#pragma once
// What the user asked `popdist run` for: the parsed command line, before any validation.
// Defaults are PopRun's (1 instance, 1 replica, 1 device per replica).

#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// The options of `popdist run`, named after PopRun's.
struct RunOptions {
  int num_instances = 1;
  int num_replicas = 1;
  int ipus_per_replica = 1;
  std::vector<std::string> host_lists;       ///< each --host/-H value (comma lists, brackets, host:slots)
  std::string hostfile;                       ///< --hostfile (exclusive with --host)
  bool print_topology = false;
  std::optional<int> only_output_from_instance;
  std::string mpi_global_args;                ///< one string, split like a shell would
  std::vector<std::string> mpi_local_args;    ///< repeatable; each split like a shell would
  bool numa_aware = false;
  bool dry_run = false;
  int verbosity = 0;                          ///< -v 1, -vv 2
  std::vector<std::string> program;           ///< the program and its arguments (after `--`)
};

}  // namespace popdist::cli
