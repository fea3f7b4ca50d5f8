// The mpi family (POPDIST_LAUNCHER=mpi only): MPI's own identity, for launchers popdist does not
// know and simulated clusters where every rank shares one environment. Never detected: the
// identity exists only once MPI has started, so detect() gets it from init() (MpiWorld).

#include <fmt/format.h>

#include "core/launchers/reading.hpp"

namespace popdist::detail {
namespace {

/// MPI's world rank and size once init() supplies them; before that (the CLI, a login node) a
/// preview of instance 0 of 1 that says where the values will come from.
Identity forced(const std::optional<MpiWorld>& world, std::vector<std::string>& warnings) {
  Identity identity;
  identity.launcher = Launcher::Mpi;
  identity.detected_by = kForced;
  const std::string source = world ? "mpi" : "mpi (after init)";
  identity.rank = Field{world ? world->rank : 0, source};
  identity.size = Field{world ? world->size : 1, source};
  // No local rank/size and no node: init() takes them from MPI's shared-memory split.
  if (!world) {
    warnings.push_back(fmt::format(
        "{}=mpi: this process's identity comes from MPI when init() runs (instance index and count: the world "
        "rank and size; local index and count and the host: MPI's shared-memory split); without MPI it reads as "
        "instance 0 of 1",
        kForced));
  }
  return identity;
}

}  // namespace

LauncherFamily mpi_family() {
  LauncherFamily family;
  family.forced = forced;
  return family;
}

}  // namespace popdist::detail
