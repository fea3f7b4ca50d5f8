#pragma once
/// @file topology_fields.hpp
/// The one table of Topology's fields as every output shows them: describe(), the CLI's JSON and
/// reports, Python's Topology.to_dict() and its keys, and the provenance map all take the names
/// and the order from here, so that a field is named once.

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
};

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
    {field::launcher, FieldKind::LauncherName},
    {field::instance_index, FieldKind::Integer, &Topology::instance_index},
    {field::num_instances, FieldKind::Integer, &Topology::num_instances},
    {field::local_instance_index, FieldKind::Integer, &Topology::local_instance_index},
    {field::num_local_instances, FieldKind::Integer, &Topology::num_local_instances},
    {field::host_index, FieldKind::OptionalInteger},
    {field::num_local_replicas, FieldKind::Integer, &Topology::num_local_replicas},
    {field::num_total_replicas, FieldKind::Integer, &Topology::num_total_replicas},
    {field::replica_index_offset, FieldKind::Integer, &Topology::replica_index_offset},
    {field::ipus_per_replica, FieldKind::Integer, &Topology::ipus_per_replica},
    {field::uniform_replicas_per_instance, FieldKind::Flag, nullptr, &Topology::uniform_replicas_per_instance},
    {field::popdist_env_set, FieldKind::Flag, nullptr, &Topology::popdist_env_set, false},
}};

/// The field named `name`; throws std::out_of_range for a name not in the table (a programming
/// error: the names are the table's).
[[nodiscard]] const TopologyField& topology_field(std::string_view name);

/// The integer value of an Integer or OptionalInteger field (std::nullopt for an unknown
/// host_index).
[[nodiscard]] std::optional<std::int64_t> field_integer(const Topology& topology, const TopologyField& field);

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
