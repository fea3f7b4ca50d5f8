#pragma once
// `popdist run`: a PopRun-like launcher on top of Open MPI's mpirun.
#include <CLI/CLI.hpp>

#include <functional>

namespace popdist::cli {
/// Adds the subcommand to `app`; the returned callable runs it after parsing and gives the exit status.
std::function<int()> add_run_command(CLI::App& app);
}  // namespace popdist::cli
