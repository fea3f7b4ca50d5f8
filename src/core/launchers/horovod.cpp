// Horovod's launcher (horovodrun with Gloo, its Spark and Ray runners): HOROVOD_RANK, _SIZE,
// _LOCAL_RANK, _LOCAL_SIZE, and HOROVOD_CROSS_RANK as the host index on equal hosts.

#include <fmt/format.h>

#include "core/launchers/reading.hpp"

namespace popdist::detail {
namespace {

std::optional<std::string> present(const EnvLookup& env) { return first_set(env, {"HOROVOD_SIZE", "HOROVOD_RANK"}); }

Identity read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Horovod;
  identity.detected_by = present(env).value_or(kForced);
  read_rank_and_size(identity, env, "HOROVOD_RANK", "HOROVOD_SIZE");
  read_local(identity, env, "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE");
  const auto cross = read_pair(identity.launcher, env, "HOROVOD_CROSS_RANK", "HOROVOD_CROSS_SIZE");
  if (cross.index && cross.index->value >= cross.count->value) {
    fail(identity.launcher, fmt::format("{} is not less than {}; expected a cross rank in 0..{}", show(*cross.index),
                                        show(*cross.count), cross.count->value - 1));
  }
  // The cross rank is the rank among the processes with this local rank: the host's index when
  // every host runs the same number of processes (cross size x local size = size), and not
  // otherwise (hosts of 1 and 3 slots give host 1's second process cross rank 0). A host index
  // that is wrong for some processes is worse than none, so it is taken only in the uniform case.
  if (cross.index && identity.local_size &&
      static_cast<long long>(cross.count->value) * identity.local_size->value == identity.size.value) {
    identity.node = cross.index;
  }
  return validated(std::move(identity));
}

}  // namespace

LauncherFamily horovod_family() {
  LauncherFamily family;
  family.markers = {"HOROVOD_SIZE", "HOROVOD_RANK"};
  family.present = present;
  family.read = read;
  family.stated = {{"HOROVOD_RANK", true},       {"HOROVOD_SIZE"},      {"HOROVOD_LOCAL_RANK", true},
                   {"HOROVOD_LOCAL_SIZE"},       {"HOROVOD_CROSS_RANK", true}, {"HOROVOD_CROSS_SIZE"}};
  family.needs = "horovod needs HOROVOD_RANK and HOROVOD_SIZE";
  return family;
}

}  // namespace popdist::detail
