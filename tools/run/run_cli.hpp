#pragma once
// The command line of `popdist run` (CLI11): PopRun's option names, defaults and value words.

#include <CLI/CLI.hpp>

#include "run_options.hpp"

namespace popdist::cli {

/// Declares the options of `run` on `sub`, storing into `options` (which must outlive parsing).
/// Bad values are refused while parsing (CLI11 errors naming the option and the value).
void add_run_options(CLI::App& sub, RunOptions& options);

}  // namespace popdist::cli
