// Cray PALS (aprun's successor on HPE Cray EX): PMI_RANK/PALS_RANKID, PMI_SIZE, PMI_LOCAL_RANK/
// PALS_LOCAL_RANKID, PMI_LOCAL_SIZE, and PALS_NODEID as the node index.

#include <fmt/format.h>

#include "core/launchers/reading.hpp"

namespace popdist::detail {
namespace {

std::optional<std::string> present(const EnvLookup& env) {
  if (auto name = first_set(env, {"PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_NODEID", "PALS_APID"})) return name;
  // PMI_LOCAL_RANK is PALS's; Hydra sets MPI_LOCALRANKID instead.
  if (env("PMI_LOCAL_RANK") && env("PMI_RANK")) return std::string("PMI_LOCAL_RANK");
  return std::nullopt;
}

Identity read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Pals;
  identity.detected_by = present(env).value_or(kForced);
  const auto rank = read_alike(identity.launcher, env, {"PMI_RANK", "PALS_RANKID"}, Expect::NonNegative);
  const auto size = read_field(env, "PMI_SIZE", Expect::Positive);
  // Each sentence names what is set and what is missing once (the marker may be the rank itself).
  const std::string expected = "expected PMI_RANK (or PALS_RANKID) and PMI_SIZE";
  if (!rank && !size) {
    fail(identity.launcher,
         fmt::format("{} but neither PMI_RANK/PALS_RANKID nor PMI_SIZE is; {}", cause(identity), expected));
  }
  if (!size) fail(identity.launcher, fmt::format("{} is set but PMI_SIZE is not; {}", show(*rank), expected));
  if (!rank) {
    fail(identity.launcher,
         fmt::format("{} is set but neither PMI_RANK nor PALS_RANKID is; {}", show(*size), expected));
  }
  identity.rank = *rank;
  identity.size = *size;
  const auto local_rank =
      read_alike(identity.launcher, env, {"PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"}, Expect::NonNegative);
  const auto local_size = read_field(env, "PMI_LOCAL_SIZE", Expect::Positive);
  if (local_rank && !local_size) {
    fail(identity.launcher, fmt::format("{} is set but PMI_LOCAL_SIZE is not; expected both or neither",
                                        show(*local_rank)));
  }
  if (local_size && !local_rank) {
    fail(identity.launcher, fmt::format("{} is set but neither PMI_LOCAL_RANK nor PALS_LOCAL_RANKID is; expected "
                                        "both or neither",
                                        show(*local_size)));
  }
  identity.local_rank = local_rank;
  identity.local_size = local_size;
  identity.node = read_field(env, "PALS_NODEID", Expect::NonNegative);
  return validated(std::move(identity));
}

}  // namespace

LauncherFamily pals_family() {
  LauncherFamily family;
  family.markers = {"PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_NODEID", "PALS_APID", "PMI_LOCAL_RANK with PMI_RANK"};
  family.present = present;
  family.read = read;
  family.stated = {{"PALS_RANKID", true},    {"PALS_LOCAL_RANKID", true}, {"PALS_NODEID", true},
                   {"PMI_LOCAL_RANK", true}, {"PMI_LOCAL_SIZE"}};
  family.needs = "pals needs PMI_RANK (or PALS_RANKID) and PMI_SIZE";
  // PALS provides its identity through PMI_RANK/PMI_SIZE: those are not a second (MPICH) launch.
  family.sets_variables_of = {Launcher::Mpich};
  return family;
}

}  // namespace popdist::detail
