#pragma once
// What the user asked `popdist run` for: the parsed command line, before any validation.
// Defaults are PopRun's (1 instance, 1 device per replica), except that the number of replicas
// defaults to one per instance (PopRun's 1 when there is one instance), so that
// `popdist run --num-instances 4 -- prog` works without a --num-replicas.

#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// The options of `popdist run`, named after PopRun's.
struct RunOptions {
  int num_instances = 1;
  std::optional<int> num_replicas;          ///< unset: one per instance (see total_replicas())
  int ipus_per_replica = 1;
  std::vector<std::string> host_lists;       ///< each --host/-H value (comma lists, brackets, host:slots)
  std::string hostfile;                       ///< --hostfile (exclusive with --host)
  bool print_topology = false;
  std::optional<int> only_output_from_instance;
  std::vector<std::string> mpi_global_args;  ///< repeatable; each split like a shell would
  std::vector<std::string> mpi_local_args;   ///< repeatable; each split like a shell would
  bool numa_aware = false;
  bool dry_run = false;
  int verbosity = 0;                          ///< -v 1, -vv 2
  std::vector<std::string> warnings;          ///< PopRun options accepted but without effect here
  std::vector<std::string> program;           ///< the program and its arguments
  std::optional<std::string> master_addr;     ///< --master-addr (torchrun's MASTER_ADDR for every instance)
  std::optional<int> master_port;             ///< --master-port (torchrun's MASTER_PORT)
};

/// --num-replicas, or one replica per instance when it was not given.
[[nodiscard]] inline int total_replicas(const RunOptions& options) {
  return options.num_replicas.value_or(options.num_instances);
}

}  // namespace popdist::cli
