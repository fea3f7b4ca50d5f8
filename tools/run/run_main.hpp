#pragma once
// `popdist run` after parsing: validate, plan, build the mpirun command, then print it (dry run)
// or run it and return its exit status.

#include "popdist/environment.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

/// Exit status when mpirun is not on PATH (a shell's "command not found").
inline constexpr int kExitMpirunNotFound = 127;
/// Exit status of usage errors (bad options or values), as for every popdist subcommand.
inline constexpr int kExitUsage = 2;

/// Runs the job described by `options` in environment `env`; returns the exit status: 0 or the
/// job's status, kExitUsage for invalid options, kExitMpirunNotFound. Messages go to stderr.
[[nodiscard]] int run_job(const RunOptions& options, const EnvLookup& env);

}  // namespace popdist::cli
