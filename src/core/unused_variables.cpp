// Finds the launch variables that no family was formed from (see unused_variables.hpp).

#include "core/unused_variables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/launchers/family.hpp"
#include "core/numbers.hpp"
#include "popdist/error.hpp"

namespace popdist::detail {
namespace {

/// A stated index that parses to a value > 0. A malformed value states nothing certain, so it
/// only warns (its text is shown).
bool above_zero(const EnvLookup& env, const std::string& name) {
  try {
    const auto number = read_number(env, name, Expect::NonNegative);
    return number && number->value > 0;
  } catch (const EnvironmentError&) {
    return false;
  }
}

UnusedVariable unused(const EnvLookup& env, const StatedVariable& variable, const std::string& value,
                      const std::string& why, std::optional<Launcher> family) {
  return UnusedVariable{variable.name, fmt::format("{}={}", variable.name, printable(value)),
                        variable.index && above_zero(env, variable.name), why, family};
}

}  // namespace

std::vector<UnusedVariable> unused_launch_variables(const EnvLookup& env) {
  const auto& probes = launch_families();
  // A variable several families state (RANK: torchrun and pytorch; PMI_RANK: pals and mpich) is
  // explained by the last, lowest-priority one, whose reason is the least demanding.
  std::map<std::string, std::size_t> owner;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    for (const auto& variable : probes[i]->stated) owner[variable.name] = i;
  }
  // Under POPDIST_LAUNCHER=singleton or popdist, a present family's variables are reported as a
  // disagreeing launch instead, and PMIX_RANK & co. are that family's companions.
  std::set<std::string> claimed;
  bool any_present = false;
  for (const auto* probe : probes) {
    if (!probe->present(env)) continue;
    any_present = true;
    for (const auto& variable : probe->stated) claimed.insert(variable.name);
  }
  std::vector<UnusedVariable> found;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    for (const auto& variable : probes[i]->stated) {
      if (owner.at(variable.name) != i || claimed.count(variable.name) != 0) continue;
      if (const auto value = env(variable.name)) {
        found.push_back(unused(env, variable, *value, probes[i]->needs, probes[i]->launcher));
      }
    }
  }
  if (any_present) return found;
  for (const auto& familyless : familyless_variables()) {
    if (const auto value = env(familyless.variable.name)) {
      found.push_back(unused(env, familyless.variable, *value, familyless.why, std::nullopt));
    }
  }
  return found;
}

std::string join_shown(const std::vector<UnusedVariable>& variables) {
  std::string text;
  for (const auto& variable : variables) text += (text.empty() ? "" : ", ") + variable.shown;
  return text;
}

std::string join_reasons(const std::vector<UnusedVariable>& variables) {
  std::vector<std::string> reasons;
  for (const auto& variable : variables) {
    if (std::find(reasons.begin(), reasons.end(), variable.why) == reasons.end()) reasons.push_back(variable.why);
  }
  std::string text;
  for (const auto& reason : reasons) text += (text.empty() ? "" : "; ") + reason;
  return text;
}

}  // namespace popdist::detail
