#pragma once
// `popdist _reach`: the hidden probe (job/reach_line.hpp). It connects to popdist run's channel
// once, within its time, and says on stderr what happened, in one line that popdist run's report
// quotes: it runs on a host whose agents never spoke, where nothing else of the job is.
#include <CLI/CLI.hpp>

#include <functional>

namespace popdist::cli {
/// Adds the subcommand to `app`; the returned callable runs it after parsing and gives the exit
/// status: kReachConnected or kReachNoConnection.
std::function<int()> add_reach_command(CLI::App& app);
}  // namespace popdist::cli
