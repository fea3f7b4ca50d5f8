#pragma once
// The one `mpirun` command line of a run: global options, then one app context for every
// instance (`-np N -x ... popdist _instance --plan I,R,D,H -- program`). What differs per instance
// is derived by its agent from its rank (agent/instance_agent.hpp), so the command does not grow with
// the number of instances. Pure: every fact about the machine comes in through MpirunContext.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/launch/command_parts.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

/// What the command depends on besides the options and the plan.
struct MpirunContext {
  /// argv[0] of mpirun. Its bare name, not its path: Open MPI treats an absolute argv[0] as
  /// `--prefix <dir>` and then prefixes every remote daemon command with PATH=...; export PATH.
  std::string mpirun = "mpirun";
  bool as_root = false;                   ///< effective uid 0
  int local_cores = 1;                    ///< cores of this machine (slots when no hosts are given)
  std::optional<std::string> env_pml;     ///< OMPI_MCA_pml from our environment, when set
  std::vector<std::string> forwarded;     ///< set variables to forward by name (-x PATH ...)
  /// The popdist binary, which starts each instance as `popdist _instance` (agent/instance_agent.hpp).
  std::string agent = "popdist";
  /// This attempt's job directory (job/job_directory.hpp); empty: none (a dry run, unit tests).
  std::string job_directory;
  /// This attempt's log folder (--log-dir DIR/attempt_K, absolute); empty: no log files.
  std::string log_directory;
  bool omp_threads = false;              ///< OMP_NUM_THREADS is unset: the agents set it
  bool env_binding = false;              ///< OMPI_MCA_hwloc_base_binding_policy is set
  bool env_tmpdir = false;               ///< OMPI_MCA_orte_tmpdir_base (or a local one) is set
  /// Variables set for every instance besides the POPDIST_* ones (PopRun options kept:
  /// run/plan/job_variables.hpp), before --mpi-local-args so that a user's -x of the same name wins.
  std::vector<std::pair<std::string, std::string>> exports;
  /// MASTER_ADDR and MASTER_PORT for every instance (run/plan/master_endpoint.hpp); empty address: the
  /// torchrun variables are not exported (unit tests of other parts).
  std::string master_addr;
  int master_port = 0;
  /// The agents tag each output line instead of mpirun's --tag-output: Open MPI 5's puts a space
  /// after the tag, which 4's and hydra's (tagged by the agents) do not (launcher_command.cpp).
  bool agents_tag = false;
};

/// The command and what was decided on the way (shown with -v) or should be warned about.
struct MpirunCommand {
  std::vector<std::string> argv;          ///< argv[0] is MpirunContext::mpirun
  std::vector<std::string> decisions;     ///< "added --mca pml ^cm: ..." (for -v)
  std::vector<std::string> warnings;      ///< always shown on stderr
  std::string launcher;                   ///< which backend, what and where (launcher_command.hpp); empty: not said
};


/// Builds the command; the program's words reach it verbatim, ':' included. Throws UsageError for
/// unbalanced quotes in --mpi-global-args or --mpi-local-args, or a ':' or --app there (another
/// app context).
[[nodiscard]] MpirunCommand build_mpirun_command(const LaunchPlan& plan, const RunOptions& options,
                                                 const MpirunContext& context);

}  // namespace popdist::cli
