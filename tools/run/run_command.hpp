#pragma once
// `popdist run`: a PopRun-like launcher on top of Open MPI's mpirun.
#include <CLI/CLI.hpp>

#include <functional>

namespace popdist::cli {
/// Adds the subcommand to `app`; the returned callable runs it after parsing and gives the exit status.
std::function<int()> add_run_command(CLI::App& app);

/// Adds the hidden `_whole-lines` subcommand (whole_lines.hpp) that `popdist run` starts each
/// instance under when Open MPI tags the output; returns what runs it.
std::function<int()> add_whole_lines_command(CLI::App& app);
}  // namespace popdist::cli
