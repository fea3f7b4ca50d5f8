#pragma once
// `popdist run`: a PopRun-like launcher on top of Open MPI's mpirun. This file: the subcommand
// as CLI11 sees it (its options); run/run_main.hpp: what runs once they are parsed.
#include <CLI/CLI.hpp>

#include <functional>

#include "run/options/run_options.hpp"

namespace popdist::cli {
/// Adds the subcommand to `app`; the returned callable runs it after parsing and gives the exit status.
std::function<int()> add_run_command(CLI::App& app);

/// Declares the options of `run` on `sub`, storing into `options` (which must outlive parsing).
/// Bad values are refused while parsing (CLI11 errors naming the option and the value).
void add_run_options(CLI::App& sub, RunOptions& options);

}  // namespace popdist::cli
