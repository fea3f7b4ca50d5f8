#pragma once
/// @file topology_fields.hpp
/// The one table of Topology's fields. Every output shows them from here (describe(), the CLI's
/// JSON and reports, Python's Topology.to_dict() and its keys, the provenance map: names and order),
/// and Topology's equality and init()'s instance record go through it, so that a field is named
/// once. Adding a field: its member in topology.hpp, its row here (and, for a new kind of value,
/// its slot in the instance record), and detect() computing it.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "popdist/topology.hpp"

namespace popdist {

/// How a field's value reads.
enum class FieldKind {
  Integer,          ///< an int member
  OptionalInteger,  ///< host_index: unknown when the launcher gives no node index
  Flag,             ///< a bool member
  LauncherName,     ///< the launcher, by launcher_name()
};

/// One field of Topology.
struct TopologyField {
  std::string_view name;  ///< the key everywhere: describe(), JSON, to_dict(), reports, provenance
  FieldKind kind;
  int Topology::*integer = nullptr;  ///< FieldKind::Integer
  bool Topology::*flag = nullptr;    ///< FieldKind::Flag
  /// Whether detect() records where the value came from (all but popdist_env_set, which is a
  /// conclusion about the whole environment, not a variable's value).
  bool has_provenance = true;
  std::optional<int> Topology::*optional_integer = nullptr;  ///< FieldKind::OptionalInteger
  /// PopDist's getter of the field (getInstanceIndex, ...), empty when PopDist has none: the
  /// name under which the Python package offers it.
  std::string_view popdist_getter = {};
};

/// The rows of the table, one maker per kind.
[[nodiscard]] constexpr TopologyField launcher_field(std::string_view name) {
  return {name, FieldKind::LauncherName};
}
[[nodiscard]] constexpr TopologyField integer_field(std::string_view name, int Topology::*member,
                                                    std::string_view popdist_getter = {}) {
  return {name, FieldKind::Integer, member, nullptr, true, nullptr, popdist_getter};
}
[[nodiscard]] constexpr TopologyField optional_integer_field(std::string_view name,
                                                             std::optional<int> Topology::*member) {
  return {name, FieldKind::OptionalInteger, nullptr, nullptr, true, member};
}
[[nodiscard]] constexpr TopologyField flag_field(std::string_view name, bool Topology::*member,
                                                 std::string_view popdist_getter, bool has_provenance = true) {
  return {name, FieldKind::Flag, nullptr, member, has_provenance, nullptr, popdist_getter};
}

/// The fields' names, for the code that writes their provenance (detect(), init()).
namespace field {
inline constexpr std::string_view launcher = "launcher";
inline constexpr std::string_view instance_index = "instance_index";
inline constexpr std::string_view num_instances = "num_instances";
inline constexpr std::string_view local_instance_index = "local_instance_index";
inline constexpr std::string_view num_local_instances = "num_local_instances";
inline constexpr std::string_view host_index = "host_index";
inline constexpr std::string_view num_local_replicas = "num_local_replicas";
inline constexpr std::string_view num_total_replicas = "num_total_replicas";
inline constexpr std::string_view replica_index_offset = "replica_index_offset";
inline constexpr std::string_view ipus_per_replica = "ipus_per_replica";
inline constexpr std::string_view uniform_replicas_per_instance = "uniform_replicas_per_instance";
inline constexpr std::string_view popdist_env_set = "popdist_env_set";
}  // namespace field

/// The fields, in the order every output lists them. (ipus_per_replica_set is not among them:
/// it is a detail of check_ipus_per_replica, kept out of the outputs.)
inline constexpr std::array<TopologyField, 12> topology_fields{{
    launcher_field(field::launcher),
    integer_field(field::instance_index, &Topology::instance_index, "getInstanceIndex"),
    integer_field(field::num_instances, &Topology::num_instances, "getNumInstances"),
    integer_field(field::local_instance_index, &Topology::local_instance_index, "getLocalInstanceIndex"),
    integer_field(field::num_local_instances, &Topology::num_local_instances),
    optional_integer_field(field::host_index, &Topology::host_index),
    integer_field(field::num_local_replicas, &Topology::num_local_replicas, "getNumLocalReplicas"),
    integer_field(field::num_total_replicas, &Topology::num_total_replicas, "getNumTotalReplicas"),
    integer_field(field::replica_index_offset, &Topology::replica_index_offset, "getReplicaIndexOffset"),
    integer_field(field::ipus_per_replica, &Topology::ipus_per_replica, "getNumIpusPerReplica"),
    flag_field(field::uniform_replicas_per_instance, &Topology::uniform_replicas_per_instance,
               "isUniformReplicasPerInstance"),
    flag_field(field::popdist_env_set, &Topology::popdist_env_set, "isPopdistEnvSet", false),
}};

/// The field named `name`; throws std::out_of_range for a name not in the table (a programming
/// error: the names are the table's).
[[nodiscard]] const TopologyField& topology_field(std::string_view name);

/// The integer value of an Integer or OptionalInteger field (std::nullopt for an unknown
/// host_index).
[[nodiscard]] std::optional<std::int64_t> field_integer(const Topology& topology, const TopologyField& field);

/// Whether two topologies hold the same value in `field`.
[[nodiscard]] bool same_field_value(const Topology& a, const Topology& b, const TopologyField& field);

/// A field's value as text: integers in decimal, an unknown host_index as "unknown", flags as
/// `yes` / `no` (describe() says "true"/"false", the CLI's report "yes"/"no"), the launcher by name.
[[nodiscard]] std::string field_text(const Topology& topology, const TopologyField& field,
                                     std::string_view yes = "true", std::string_view no = "false");

/// Where a field's value came from (the variable, or "default", "derived", "mpi"); "unknown"
/// when the topology does not say (one made by hand, or another instance's view).
[[nodiscard]] std::string provenance_of(const Topology& topology, std::string_view field);

/// The provenance entry of a field, for writing it: `source_of(t, field::instance_index) = "RANK"`.
inline std::string& source_of(Topology& topology, std::string_view field) {
  return topology.provenance[std::string(field)];
}

}  // namespace popdist
