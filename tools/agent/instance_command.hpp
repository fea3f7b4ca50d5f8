#pragma once
// `popdist _instance`, the hidden subcommand that `popdist run` starts every instance under, as
// CLI11 sees it: its options (job/agent_line.hpp); agent/instance_agent.hpp: what runs then.
#include <CLI/CLI.hpp>

#include <functional>

namespace popdist::cli {
/// Adds the hidden `_instance` subcommand to `app`; returns what runs it.
std::function<int()> add_instance_command(CLI::App& app);
}  // namespace popdist::cli
