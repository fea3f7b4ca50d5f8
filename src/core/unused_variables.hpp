#pragma once
// "Never a silent singleton": the variables that state part of a launch (a rank, a size, a local
// rank, a node) but formed no launcher family, each with the reason it was not used.

#include <optional>
#include <string>
#include <vector>

#include "popdist/environment.hpp"
#include "popdist/topology.hpp"

namespace popdist::detail {

/// One set variable that states part of a launch no family was formed from.
struct UnusedVariable {
  std::string name;
  std::string shown;          ///< "RANK=3" (the value made printable)
  bool not_first = false;     ///< an index > 0: this process is certainly not the job's first
  std::string why;            ///< what would have formed a family from it
  /// The family that states it (std::nullopt for a family-less one): a scheduler's variables are
  /// reported with its allocation (LauncherFamily::allocation_without_launch).
  std::optional<Launcher> family;
};

/// Every set variable that a family or a family-less launcher states, in priority order, except
/// those of a family that is present (which detect() reports as a launch of its own).
[[nodiscard]] std::vector<UnusedVariable> unused_launch_variables(const EnvLookup& env);

/// "RANK=3, LOCAL_RANK=1" for the given entries.
[[nodiscard]] std::string join_shown(const std::vector<UnusedVariable>& variables);

/// One sentence per distinct reason, joined by "; " ("the PyTorch environment needs ...").
[[nodiscard]] std::string join_reasons(const std::vector<UnusedVariable>& variables);

}  // namespace popdist::detail
