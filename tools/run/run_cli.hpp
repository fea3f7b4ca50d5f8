#pragma once
// The command line of `popdist run` (CLI11): PopRun's option names and defaults.

#include <CLI/CLI.hpp>

#include "run_options.hpp"

namespace popdist::cli {

/// Declares the options of `run` on `sub`, storing into `options` (which must outlive parsing).
void add_run_options(CLI::App& sub, RunOptions& options);

/// After parsing: throws UsageError unless the program came after `--` (so that a word meant as
/// an option's value, e.g. `--print-topology yes`, is never started as the program).
void check_program_after_separator(const CLI::App& sub, const RunOptions& options);

}  // namespace popdist::cli
