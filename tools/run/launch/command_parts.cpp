#include "run/launch/command_parts.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/argument_text.hpp"
#include "job/agent_line.hpp"
#include "job/instance_plan.hpp"
#include "popdist/error.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/launch/shell_words.hpp"

namespace popdist::cli {
namespace {

// Open MPI's mpirun and hydra's mpiexec read a ':' anywhere on their command line, even among a
// program's arguments, as the start of another app context. Such words travel as placeholders, and the agent puts them
// back by position (so no argument of the program can be mistaken for one).
std::string colon_positions(const std::vector<std::string>& program) {
  std::string positions;
  for (std::size_t i = 0; i < program.size(); ++i) {
    if (program[i] == ":") positions += fmt::format("{}{}", positions.empty() ? "" : ",", i + 1);
  }
  return positions;
}

}  // namespace

// The words of --mpi-global-args or --mpi-local-args. A ':' (or --app) there would start another
// app context: a program popdist did not plan, run with none of popdist's variables.
std::vector<std::string> launcher_words(const std::vector<std::string>& texts, std::string_view option) {
  std::vector<std::string> words;
  for (const auto& text : texts) {
    auto split = split_shell_words(text, option);
    for (const auto& word : split) {
      if (word == ":" || word == "--app" || word == "-app") {
        throw UsageError(fmt::format("{} {}: '{}' would start another app context (another program); popdist run starts exactly "
                                     "one per instance (put the program after '--')",
                                     option, shown(text), word));
      }
    }
    words.insert(words.end(), split.begin(), split.end());
  }
  return words;
}

// The variables popdist run sets itself, each with what it is for instance 0 (the same names for
// every instance).
std::vector<std::pair<std::string, std::string>> variables_we_set(const LaunchPlan& plan, const MpirunContext& context) {
  auto variables = instance_variables(plan, 0);
  if (!context.master_addr.empty()) {
    variables.emplace_back("MASTER_ADDR", context.master_addr);
    variables.emplace_back("MASTER_PORT", std::to_string(context.master_port));
  }
  variables.insert(variables.end(), context.exports.begin(), context.exports.end());
  variables.emplace_back("TORCHELASTIC_ERROR_FILE", "<job dir>/instance<RANK>.error.json");
  return variables;
}

// The agent in front of the program (agent/instance_agent.hpp), with what every instance shares.
void append_agent(std::vector<std::string>& argv, const LaunchPlan& plan, const RunOptions& options,
                  const MpirunContext& context, bool tag_output) {
  argv.insert(argv.end(), {context.agent, kInstanceCommand, "--plan", plan_argument(plan)});
  if (!context.job_directory.empty()) argv.insert(argv.end(), {"--job-dir", context.job_directory});
  if (!context.log_directory.empty()) argv.insert(argv.end(), {"--log-dir", context.log_directory});
  if (!context.log_directory.empty() && options.tee) argv.push_back("--tee");
  if (options.only_output_from_instance) {
    argv.insert(argv.end(), {"--output-from", std::to_string(*options.only_output_from_instance)});
  }
  if (context.omp_threads) argv.push_back("--omp-threads");
  if (tag_output) argv.push_back("--tag-output");
  const auto colons = colon_positions(options.program);
  if (!colons.empty()) argv.insert(argv.end(), {"--colons", colons});
  argv.push_back("--");
  for (const auto& word : options.program) argv.push_back(word == ":" ? "popdist-colon" : word);
}

const std::vector<std::string>& forwardable_variables() {
  static const std::vector<std::string> names{"PATH",          "LD_LIBRARY_PATH",      "PYTHONPATH",
                                              "POPDIST_LOG_LEVEL", "POPDIST_SYNC_TIMEOUT", "OMP_NUM_THREADS"};
  return names;
}

void refuse_our_variable(const std::string& name, std::string_view option, std::string_view written,
                         const LaunchPlan& plan, const MpirunContext& context) {
  const auto ours = variables_we_set(plan, context);
  const auto found = std::find_if(ours.begin(), ours.end(), [&](const auto& pair) { return pair.first == name; });
  if (found == ours.end()) return;
  throw UsageError(fmt::format(
      "{} {}: popdist run sets {} itself (instance 0: {}={}); choose it with popdist run's own options "
      "(--num-instances, --num-replicas, --ipus-per-replica, --master-addr, --master-port), not through the launcher",
      option, shown(written), name, name, found->second));
}

}  // namespace popdist::cli
