// Finds the launch variables that no family was formed from (see unused_variables.hpp).

#include "core/unused_variables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/launchers.hpp"
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
                      const std::string& why, bool slurm) {
  return UnusedVariable{variable.name, fmt::format("{}={}", variable.name, printable(value)),
                        variable.index && above_zero(env, variable.name), why, slurm};
}

}  // namespace

std::vector<UnusedVariable> unused_launch_variables(const EnvLookup& env) {
  std::vector<UnusedVariable> found;
  std::set<std::string> seen;
  // A variable several families state (RANK: torchrun and pytorch; PMI_RANK: pals and mpich) is
  // explained by the last, lowest-priority one, whose reason is the least demanding.
  const auto& probes = launcher_probes();
  // Under POPDIST_LAUNCHER=singleton or popdist, a present family's variables are reported as a
  // disagreeing launch instead, and PMIX_RANK & co. are that family's companions.
  bool any_present = false;
  for (const auto& probe : probes) {
    if (!probe.present(env)) continue;
    any_present = true;
    for (const auto& variable : probe.stated) seen.insert(variable.name);
  }
  for (auto probe = probes.rbegin(); probe != probes.rend(); ++probe) {
    for (const auto& variable : probe->stated) {
      if (!seen.insert(variable.name).second) continue;
      if (const auto value = env(variable.name)) {
        found.push_back(unused(env, variable, *value, probe->needs, probe->launcher == Launcher::Slurm));
      }
    }
  }
  for (const auto& familyless : familyless_variables()) {
    if (any_present) break;
    if (!seen.insert(familyless.variable.name).second) continue;
    if (const auto value = env(familyless.variable.name)) {
      found.push_back(unused(env, familyless.variable, *value, familyless.why, false));
    }
  }
  // Report in priority order (the loop above ran backwards to pick the reasons).
  std::stable_sort(found.begin(), found.end(), [&](const UnusedVariable& a, const UnusedVariable& b) {
    const auto rank = [&](const UnusedVariable& v) {
      for (std::size_t i = 0; i < probes.size(); ++i) {
        if (probes[i].needs == v.why) return i;
      }
      return probes.size();
    };
    return rank(a) < rank(b);
  });
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
