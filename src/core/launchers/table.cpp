// The family table (launcher_families.hpp) made into LauncherFamily values: each row's file
// supplies the family, the row its name and priority. Also the names' lookups, written once.

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/launchers/family.hpp"
#include "popdist/error.hpp"

namespace popdist {
namespace detail {
namespace {

/// Every error of a family's variables starts with the family's name, including the number and
/// tasks-list errors raised below the probe.
std::function<Identity(const EnvLookup&)> named(std::string_view name, std::function<Identity(const EnvLookup&)> read) {
  return [prefix = fmt::format("{}: ", name), read = std::move(read)](const EnvLookup& env) {
    try {
      return read(env);
    } catch (const EnvironmentError& error) {
      const std::string message = error.what();
      if (message.rfind(prefix, 0) == 0) throw;
      throw EnvironmentError(prefix + message);
    }
  };
}

LauncherFamily from_row(LauncherFamily family, Launcher launcher, std::string_view name, int priority) {
  family.launcher = launcher;
  family.name = name;
  family.priority = priority;
  if (family.read) family.read = named(name, std::move(family.read));
  return family;
}

std::vector<LauncherFamily> by_priority() {
  std::vector<LauncherFamily> families = {
#define POPDIST_FAMILY_ROW(enumerator, name, priority) \
  from_row(name##_family(), Launcher::enumerator, #name, priority),
      POPDIST_LAUNCHER_FAMILIES(POPDIST_FAMILY_ROW)
#undef POPDIST_FAMILY_ROW
  };
  // Forced-only families (priority 0) last: they are never tried.
  const auto rank = [](const LauncherFamily& family) { return family.priority == 0 ? std::numeric_limits<int>::max() : family.priority; };
  std::stable_sort(families.begin(), families.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return families;
}

}  // namespace

const std::vector<LauncherFamily>& launcher_families() {
  static const std::vector<LauncherFamily> kFamilies = by_priority();
  return kFamilies;
}

const std::vector<const LauncherFamily*>& launch_families() {
  static const std::vector<const LauncherFamily*> kLaunches = [] {
    std::vector<const LauncherFamily*> found;
    for (const auto& family : launcher_families()) {
      if (family.is_launch()) found.push_back(&family);
    }
    return found;
  }();
  return kLaunches;
}

const LauncherFamily& find_family(Launcher launcher) {
  for (const auto& family : launcher_families()) {
    if (family.launcher == launcher) return family;
  }
  throw std::logic_error(fmt::format("launcher {} has no row in the family table", static_cast<int>(launcher)));
}

const std::string& family_names() {
  static const std::string kNames = [] {
    std::string text;
#define POPDIST_FAMILY_NAME(enumerator, name, priority) text += (text.empty() ? "" : ", ") + std::string(#name);
    POPDIST_LAUNCHER_FAMILIES(POPDIST_FAMILY_NAME)
#undef POPDIST_FAMILY_NAME
    return text;
  }();
  return kNames;
}

}  // namespace detail

std::string_view launcher_name(Launcher launcher) noexcept {
  switch (launcher) {
#define POPDIST_FAMILY_CASE(enumerator, name, priority) \
  case Launcher::enumerator:                            \
    return #name;
    POPDIST_LAUNCHER_FAMILIES(POPDIST_FAMILY_CASE)
#undef POPDIST_FAMILY_CASE
  }
  return "unknown";
}

std::optional<Launcher> parse_launcher_name(std::string_view name) noexcept {
#define POPDIST_FAMILY_PARSE(enumerator, family_name, priority) \
  if (name == #family_name) return Launcher::enumerator;
  POPDIST_LAUNCHER_FAMILIES(POPDIST_FAMILY_PARSE)
#undef POPDIST_FAMILY_PARSE
  return std::nullopt;
}

}  // namespace popdist
