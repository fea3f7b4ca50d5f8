#pragma once
// PopRun's options that manage IPUs (V-IPU partitions, IPU-Link domains, the executable cache,
// configuration files). popdist runs no V-IPU client and attaches no IPUs, so each is recognized
// and answered: an error when the user asks for something popdist cannot provide (a partition, a
// V-IPU server or cluster), a warning when leaving it out changes nothing (a timeout, asking not
// to reset a partition).

#include <CLI/CLI.hpp>

#include "run_options.hpp"

namespace popdist::cli {

/// Declares PopRun's IPU options on `sub` (in their own help group). When one is given, parsing
/// either throws a CLI11 ValidationError naming it or appends a warning to `options.warnings`.
void add_poprun_ipu_options(CLI::App& sub, RunOptions& options);

}  // namespace popdist::cli
