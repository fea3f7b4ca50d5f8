#pragma once
// What the user asked `popdist topology` for: the parsed command line.

#include <string>

namespace popdist::cli::topology_cmd {

/// The parsed arguments.
struct TopologyOptions {
  bool json = false;      ///< --json: one JSON object instead of the table
  bool all = false;       ///< --all: init(), gather every instance's view, print the job once
  std::string env_file;   ///< --env-file: a saved environment ("-": standard input); empty: the live one
};

}  // namespace popdist::cli::topology_cmd
