#pragma once
// `popdist stacks`: where every Python instance of a running `popdist run` job is (stack_report.hpp).
#include <CLI/CLI.hpp>

#include <functional>

namespace popdist::cli {
/// Adds the subcommand to `app`; the returned callable runs it after parsing and gives the exit
/// status: 0 the report was printed (stdout), 1 no job, or several and no --job-dir.
std::function<int()> add_stacks_command(CLI::App& app);
}  // namespace popdist::cli
