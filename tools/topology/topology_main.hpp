#pragma once
// Running `popdist topology` once its arguments are parsed: choose the environment, detect (or,
// with --all, init() and gather), print, and turn errors into exit statuses.

#include <iosfwd>

#include "topology/topology_options.hpp"

namespace popdist::cli::topology_cmd {

/// Exit statuses of `popdist topology` (main.cpp maps CLI11's parse errors to usage_error too).
enum ExitStatus : int {
  exit_ok = 0,
  exit_failure = 1,              ///< anything unexpected, e.g. an MPI call failing (MpiError)
  exit_usage_error = 2,          ///< bad arguments, or an --env-file that cannot be read or parsed
  exit_invalid_environment = 3,  ///< detect() or init() rejected the environment/topology
};

/// Runs the command: prints to `out` (errors to `err`) and returns the exit status. Without
/// --all it never touches MPI. With --all only instance 0 prints the job.
int run_topology(const TopologyOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace popdist::cli::topology_cmd
