#pragma once
/// @file topology_fields.hpp
/// The one table of Topology's fields. Every output shows them from here (describe(), the CLI's
/// JSON and reports, Python's Topology.to_dict() and its keys, the provenance map: names and order),
/// Topology's equality and init()'s instance record go through it, and so do PopDist's getters in
/// both languages (context.hpp; the Python package defines one function per row with a getter),
/// so that a field is named once. Adding a field: its member in topology.hpp, its row here, and
/// detect() computing it (the instance record takes its slot from the row). Only a field with a
/// PopDist getter takes more: the getter's name in context.hpp's list (a static_assert holds it)
/// and its stubs in the two .pyi files (test_field_getters.py holds them).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
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
  /// name of the function in both languages (context.hpp, the Python package).
  std::string_view popdist_getter = {};
  /// What the getter returns, in a sentence: the Python function's docstring.
  std::string_view popdist_getter_doc = {};
};

/// The rows of the table, one maker per kind.
[[nodiscard]] constexpr TopologyField launcher_field(std::string_view name) {
  return {name, FieldKind::LauncherName};
}
[[nodiscard]] constexpr TopologyField integer_field(std::string_view name, int Topology::*member,
                                                    std::string_view popdist_getter = {},
                                                    std::string_view popdist_getter_doc = {}) {
  return {name, FieldKind::Integer, member, nullptr, true, nullptr, popdist_getter, popdist_getter_doc};
}
[[nodiscard]] constexpr TopologyField optional_integer_field(std::string_view name,
                                                             std::optional<int> Topology::*member) {
  return {name, FieldKind::OptionalInteger, nullptr, nullptr, true, member};
}
[[nodiscard]] constexpr TopologyField flag_field(std::string_view name, bool Topology::*member,
                                                 std::string_view popdist_getter, std::string_view popdist_getter_doc,
                                                 bool has_provenance = true) {
  return {name, FieldKind::Flag, nullptr, member, has_provenance, nullptr, popdist_getter, popdist_getter_doc};
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

/// The fields, in the order every output lists them; the size is deduced from the rows. (ipus_per_replica_set
/// is not among them: it is a detail of check_ipus_per_replica, kept out of the outputs.)
inline constexpr std::array topology_fields{
    launcher_field(field::launcher),
    integer_field(field::instance_index, &Topology::instance_index, "getInstanceIndex",
                  "This instance's index in 0..getNumInstances()-1 (0 when not launched)."),
    integer_field(field::num_instances, &Topology::num_instances, "getNumInstances",
                  "The number of instances in the job (1 when not launched)."),
    integer_field(field::local_instance_index, &Topology::local_instance_index, "getLocalInstanceIndex",
                  "This instance's index among the instances on its host (0 when not launched)."),
    integer_field(field::num_local_instances, &Topology::num_local_instances),
    optional_integer_field(field::host_index, &Topology::host_index),
    integer_field(field::num_local_replicas, &Topology::num_local_replicas, "getNumLocalReplicas",
                  "The number of replicas this instance drives (POPDIST_NUM_LOCAL_REPLICAS, default 1)."),
    integer_field(field::num_total_replicas, &Topology::num_total_replicas, "getNumTotalReplicas",
                  "The number of replicas in the whole job (POPDIST_NUM_TOTAL_REPLICAS, default local x "
                  "instances)."),
    integer_field(field::replica_index_offset, &Topology::replica_index_offset, "getReplicaIndexOffset",
                  "The global index of this instance's first replica."),
    integer_field(field::ipus_per_replica, &Topology::ipus_per_replica, "getNumIpusPerReplica",
                  "Devices (IPUs) per replica (POPDIST_NUM_IPUS_PER_REPLICA, default 1)."),
    flag_field(field::uniform_replicas_per_instance, &Topology::uniform_replicas_per_instance,
               "isUniformReplicasPerInstance", "True when every instance drives the same number of replicas."),
    flag_field(field::popdist_env_set, &Topology::popdist_env_set, "isPopdistEnvSet",
               "True when POPDIST_* variables are present *or* a launcher (mpirun, srun, torchrun) started\n"
               "this process. (Graphcore's PopDist looked at POPDIST_* only, so a PopDist script under plain\n"
               "``mpirun -np 4`` ran as 4 unrelated copies; here it runs as 4 instances.)",
               false),
};

/// The row of the field whose PopDist getter is `getter`. Evaluated at compile time (context.hpp),
/// a name no row has is a build error; at run time it throws std::out_of_range.
[[nodiscard]] constexpr std::size_t popdist_getter_row(std::string_view getter) {
  for (std::size_t row = 0; row < topology_fields.size(); ++row) {
    if (!getter.empty() && topology_fields[row].popdist_getter == getter) return row;
  }
  throw std::out_of_range("no field of topology_fields.hpp has this PopDist getter");
}

/// The value of the field in row `Row` of the table, read through its member: an int for an
/// Integer field, a bool for a Flag (the kinds PopDist's getters return).
template <std::size_t Row>
[[nodiscard]] auto field_value(const Topology& topology) {
  constexpr const TopologyField& field = topology_fields[Row];
  static_assert(field.kind == FieldKind::Integer || field.kind == FieldKind::Flag,
                "field_value reads Integer and Flag fields");
  if constexpr (field.kind == FieldKind::Integer) {
    return topology.*field.integer;
  } else {
    return topology.*field.flag;
  }
}

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
