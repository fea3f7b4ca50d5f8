#pragma once
// `popdist topology`: prints what this process (or, with --all, every instance) would see.
#include <CLI/CLI.hpp>

#include <functional>

namespace popdist::cli {
/// Adds the subcommand to `app`; the returned callable runs it after parsing and gives the exit status.
std::function<int()> add_topology_command(CLI::App& app);
}  // namespace popdist::cli
