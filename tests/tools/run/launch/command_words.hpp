#pragma once
// What the launcher-command tests share: looking for words in an argv, and the options and
// context a command is built from (the launcher's name and one awkward value apart).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "run/launch/mpirun_command.hpp"
#include "run/options/run_options.hpp"

namespace command_words {

using Words = std::vector<std::string>;

inline bool has_sequence(const Words& words, const Words& sequence) {
  return std::search(words.begin(), words.end(), sequence.begin(), sequence.end()) != words.end();
}

inline bool has(const Words& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

inline popdist::cli::RunOptions options_for(int instances, Words program = {"prog", "arg 1"}) {
  popdist::cli::RunOptions options;
  options.num_instances = instances;
  options.program = std::move(program);
  return options;
}

/// A context for `launcher`, with a shared variable whose value is `awkward` (spaces, commas,
/// quotes: what the launcher must pass through unchanged).
inline popdist::cli::MpirunContext context_for(const std::string& launcher, const std::string& awkward) {
  popdist::cli::MpirunContext context;
  context.mpirun = launcher;
  context.forwarded = {"PATH", "PYTHONPATH"};
  context.master_addr = "10.0.0.5";
  context.master_port = 29500;
  context.exports = {{"POPDIST_RESTART_COUNT", "0"}, {"MY VALUE", awkward}};
  return context;
}

}  // namespace command_words
