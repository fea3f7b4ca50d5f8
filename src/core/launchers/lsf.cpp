// LSF's jsrun (Job Step Manager): JSM_NAMESPACE_RANK, _SIZE, _LOCAL_RANK (maybe without its
// count), _LOCAL_SIZE; no node index (a resource set is not a host).

#include "core/launchers/reading.hpp"

namespace popdist::detail {
namespace {

std::optional<std::string> present(const EnvLookup& env) {
  return first_set(env, {"JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"});
}

Identity read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Lsf;
  identity.detected_by = present(env).value_or(kForced);
  read_rank_and_size(identity, env, "JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE");
  read_local_rank_maybe_alone(identity, env, "JSM_NAMESPACE_LOCAL_RANK", {"JSM_NAMESPACE_LOCAL_SIZE"});
  // jsrun exports no node index (the resource set is not a host).
  return validated(std::move(identity));
}

}  // namespace

LauncherFamily lsf_family() {
  LauncherFamily family;
  family.markers = {"JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"};
  family.present = present;
  family.read = read;
  family.stated = {{"JSM_NAMESPACE_RANK", true}, {"JSM_NAMESPACE_SIZE"}, {"JSM_NAMESPACE_LOCAL_RANK", true},
                   {"JSM_NAMESPACE_LOCAL_SIZE"}};
  family.needs = "lsf needs JSM_NAMESPACE_RANK and JSM_NAMESPACE_SIZE (set by jsrun)";
  return family;
}

}  // namespace popdist::detail
