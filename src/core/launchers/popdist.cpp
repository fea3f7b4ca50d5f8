// The popdist family: PopRun's replica variables without a launcher. It has no identity of its
// own: detect() derives the instance from the replicas (offset / local of total / local).

#include "core/launchers/family.hpp"
#include "core/poprun_variables.hpp"

namespace popdist::detail {

LauncherFamily popdist_family() {
  LauncherFamily family;
  family.present = [](const EnvLookup& env) -> std::optional<std::string> {
    for (const char* name : poprun::kReplicaVariables) {
      if (env(name)) return std::string(name);
    }
    return std::nullopt;
  };
  return family;
}

}  // namespace popdist::detail
