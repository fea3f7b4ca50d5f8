// MPICH's Hydra and Intel MPI: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS.

#include "core/launchers/reading.hpp"

namespace popdist::detail {
namespace {

std::optional<std::string> present(const EnvLookup& env) { return first_set(env, {"PMI_SIZE", "PMI_RANK"}); }

Identity read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Mpich;
  identity.detected_by = present(env).value_or(kForced);
  read_rank_and_size(identity, env, "PMI_RANK", "PMI_SIZE");
  read_local(identity, env, "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
  return validated(std::move(identity));
}

}  // namespace

LauncherFamily mpich_family() {
  LauncherFamily family;
  family.markers = {"PMI_SIZE", "PMI_RANK"};
  family.present = present;
  family.read = read;
  family.stated = {{"PMI_RANK", true}, {"PMI_SIZE"}, {"MPI_LOCALRANKID", true}, {"MPI_LOCALNRANKS"}};
  family.needs = "mpich needs PMI_RANK and PMI_SIZE";
  return family;
}

}  // namespace popdist::detail
