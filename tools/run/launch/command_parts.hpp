#pragma once
// The parts of a launcher's command that every backend shares: the user's --mpi-*-args words, the
// variables popdist run sets itself (which the user may not set through the launcher), and the
// agent in front of the program (agent/instance_agent.hpp) with the program's words.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "job/launch_plan.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

struct MpirunContext;

/// Variables forwarded to every instance when set: what a program needs to start the same way on
/// another host (the shell's search paths), plus popdist's own settings.
[[nodiscard]] const std::vector<std::string>& forwardable_variables();

/// The words of --mpi-global-args or --mpi-local-args (`option`), each text split like a shell
/// would. Throws UsageError for unbalanced quotes, or a ':' or --app (another app context).
[[nodiscard]] std::vector<std::string> launcher_words(const std::vector<std::string>& texts, std::string_view option);

/// The variables popdist run sets itself, each with its value for instance 0.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> variables_we_set(const LaunchPlan& plan,
                                                                                const MpirunContext& context);

/// Throws UsageError when `name` is one of variables_we_set(): `option` set it with `written`
/// (e.g. "-x RANK=3"), and one of the two would silently win.
void refuse_our_variable(const std::string& name, std::string_view option, std::string_view written,
                         const LaunchPlan& plan, const MpirunContext& context);

/// Appends `popdist _instance --plan ... -- program...` (':' words as placeholders); with
/// `tag_output`, the agents tag each line as Open MPI's --tag-output does.
void append_agent(std::vector<std::string>& argv, const LaunchPlan& plan, const RunOptions& options,
                  const MpirunContext& context, bool tag_output = false);

}  // namespace popdist::cli
