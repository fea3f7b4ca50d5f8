// The singleton: a process nobody launched, instance 0 of 1. What detect() takes when no other
// family is present, or when POPDIST_LAUNCHER=singleton says to run alone.

#include "core/launchers/family.hpp"

namespace popdist::detail {

Identity singleton_identity() {
  Identity identity;
  // No local rank/size: the singleton's 0 of 1 are defaults, not a launcher's statement, so
  // POPDIST_LOCAL_INSTANCE_INDEX is not checked against them.
  identity.node = Field{0, "default"};
  return identity;
}

LauncherFamily singleton_family() {
  LauncherFamily family;
  family.forced = [](const std::optional<MpiWorld>&, std::vector<std::string>&) { return singleton_identity(); };
  return family;
}

}  // namespace popdist::detail
