#pragma once
// What the user asked `popdist run` for: the parsed command line, before any validation.
// Defaults are PopRun's (1 instance, 1 device per replica), except that the number of replicas
// defaults to one per instance (PopRun's 1 when there is one instance), so that
// `popdist run --num-instances 4 -- prog` works without a --num-replicas.

#include <optional>
#include <string>
#include <vector>

#include "run/launch/launcher_backend.hpp"
#include "run/options/notices.hpp"

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
  /// PopRun options kept for their meaning off IPUs (poprun_ipu_options.hpp)
  std::optional<std::string> executable_cache_path;  ///< exported as POPDIST_EXECUTABLE_CACHE_PATH
  std::optional<int> num_ilds;                        ///< IPU-Link domains: POPLAR_TARGET_OPTIONS' ipuLinkDomainSize
  std::optional<std::string> host_subnet;             ///< Open MPI's TCP interfaces (btl and oob)
  std::vector<Notice> notices;                ///< what the parser has to say (ignored PopRun options)
  std::vector<std::string> program;           ///< the program and its arguments
  std::optional<std::string> master_addr;     ///< --master-addr (torchrun's MASTER_ADDR for every instance)
  std::optional<int> master_port;             ///< --master-port (torchrun's MASTER_PORT)
  // The long job (docs/guide/long-jobs.md)
  int max_restarts = 0;                       ///< --max-restarts: whole-job attempts after a failure
  std::string log_dir;                        ///< --log-dir: DIR/attempt_K/I/{stdout,stderr}.log
  bool tee = false;                           ///< --tee: with --log-dir, show the output too
  std::optional<double> stall_timeout;        ///< --stall-timeout: seconds of silence before the stack report
  bool stall_keep_running = false;            ///< --stall-keep-running: report, do not end the job
  std::string report_file;                    ///< --report-file: each attempt's outcome as JSON (run/report/report_file.hpp)
  double host_timeout = 10;                   ///< --host-timeout: seconds without a word from a host before it is lost (0: off)
  std::optional<int> min_instances;           ///< --min-instances: after a lost host, restart on fewer down to this
  /// --backend: which launcher drives the job (docs/guide/launchers.md); auto: mpirun, then mpiexec, on PATH
  BackendChoice backend = BackendChoice::automatic;
  int grace_period = 1;                       ///< --grace-period: seconds from SIGTERM to SIGKILL (Open MPI's 1)
};

/// --num-replicas, or one replica per instance when it was not given.
[[nodiscard]] inline int total_replicas(const RunOptions& options) {
  return options.num_replicas.value_or(options.num_instances);
}

}  // namespace popdist::cli
