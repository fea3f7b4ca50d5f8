#pragma once
// The plain shape several MPI launchers share (Open MPI, MVAPICH2): two marker variables (the size
// or the rank), rank and size, local rank and local size (both or neither), no node index. A
// family of this shape is its five names; plain_family() makes the rest.

#include <fmt/format.h>

#include "core/launchers/reading.hpp"

namespace popdist::detail {

struct PlainFamily {
  Launcher launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
};

/// The family of the plain shape, every part of it from its names.
[[nodiscard]] inline LauncherFamily plain_family(const PlainFamily& names) {
  LauncherFamily family;
  family.markers = {names.size, names.rank};
  family.present = [names](const EnvLookup& env) { return first_set(env, {names.size, names.rank}); };
  family.read = [names, present = family.present](const EnvLookup& env) {
    Identity identity;
    identity.launcher = names.launcher;
    identity.detected_by = present(env).value_or(kForced);
    read_rank_and_size(identity, env, names.rank, names.size);
    read_local(identity, env, names.local_rank, names.local_size);
    return validated(std::move(identity));
  };
  family.stated = {{names.rank, true}, {names.size}, {names.local_rank, true}, {names.local_size}};
  family.needs = fmt::format("{} needs {} and {}", launcher_name(names.launcher), names.rank, names.size);
  return family;
}

}  // namespace popdist::detail
