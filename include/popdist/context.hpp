#pragma once
/// @file context.hpp
/// PopDist's C++ getters by PopDist's names (`<popdist/context.hpp>`), so that code written for
/// Graphcore's PopDist compiles unchanged. Each reads popdist::topology() (runtime.hpp): detected
/// from the launcher's environment on first use, no MPI needed. Counts are unsigned, as in PopDist.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "popdist/runtime.hpp"
#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"

/// PopDist's getters of Topology's fields, one per row of the field table (topology_fields.hpp)
/// that names one. A list of names and not nine written-out functions because C++ cannot make a
/// function from the table's string: each name below becomes a function that finds its row at
/// compile time (a name no row has does not build) and reads the field through it, and the
/// static_assert after them fails the build when a row names a getter missing here.
/// isPopdistEnvSet is true when PopRun's variables are set or a launcher started this process
/// (docs/guide/python.md: a deliberate difference from PopDist, so that a PopDist program under
/// plain mpirun is one job).
#define POPDIST_CONTEXT_GETTERS(X)                                                                   \
  X(getInstanceIndex)                                                                                \
  X(getNumInstances)                                                                                 \
  X(getLocalInstanceIndex)                                                                           \
  X(getNumLocalReplicas)                                                                             \
  X(getNumTotalReplicas)                                                                             \
  X(getReplicaIndexOffset)                                                                           \
  X(getNumIpusPerReplica)                                                                            \
  X(isUniformReplicasPerInstance)                                                                    \
  X(isPopdistEnvSet)

namespace popdist {

namespace detail {

/// The value PopDist's getter of row `Row` returns: counts as unsigned (PopDist's type), flags
/// as bool.
template <std::size_t Row>
[[nodiscard]] auto popdist_getter_value() {
  const auto value = field_value<Row>(topology());
  if constexpr (std::is_same_v<std::remove_const_t<decltype(value)>, bool>) {
    return value;
  } else {
    return static_cast<unsigned>(value);
  }
}

}  // namespace detail

#define POPDIST_DEFINE_CONTEXT_GETTER(getter) \
  [[nodiscard]] inline auto getter() { return detail::popdist_getter_value<popdist_getter_row(#getter)>(); }
POPDIST_CONTEXT_GETTERS(POPDIST_DEFINE_CONTEXT_GETTER)
#undef POPDIST_DEFINE_CONTEXT_GETTER

namespace detail {

#define POPDIST_CONTEXT_GETTER_NAME(getter) std::string_view(#getter),
inline constexpr std::string_view context_getters[] = {POPDIST_CONTEXT_GETTERS(POPDIST_CONTEXT_GETTER_NAME)};
#undef POPDIST_CONTEXT_GETTER_NAME

/// Whether every row of the field table that names a PopDist getter has its function above.
[[nodiscard]] constexpr bool every_popdist_getter_defined() {
  for (const auto& field : topology_fields) {
    if (field.popdist_getter.empty()) continue;
    bool defined = false;
    for (const auto name : context_getters) defined = defined || name == field.popdist_getter;
    if (!defined) return false;
  }
  return true;
}

static_assert(every_popdist_getter_defined(),
              "a row of topology_fields.hpp names a PopDist getter missing from POPDIST_CONTEXT_GETTERS");

}  // namespace detail

/// False if POPDIST_NUM_IPUS_PER_REPLICA is set and differs from `ipus`; unset: `ipus` == 1.
[[nodiscard]] inline bool checkNumIpusPerReplica(unsigned ipus) {
  return check_ipus_per_replica(topology(), static_cast<int>(ipus));
}
/// The id of this instance's multi-IPU device group (design.md §4); 0 takes the IPUs per replica
/// from the environment.
[[nodiscard]] inline std::int64_t getDeviceId(unsigned ipusPerReplica = 0) {
  return device_id(topology(), static_cast<int>(ipusPerReplica));
}

}  // namespace popdist
