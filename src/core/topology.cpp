// The Topology value's comparison and printing, and the field table's helpers.

#include <fmt/format.h>

#include <ostream>
#include <stdexcept>

#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"

namespace popdist {

bool operator==(const Topology& a, const Topology& b) {
  // Every member: the table's fields, then the three the outputs leave out (provenance and
  // warnings included: two topologies are equal when they print the same).
  for (const auto& field : topology_fields) {
    if (!same_field_value(a, b, field)) return false;
  }
  return a.ipus_per_replica_set == b.ipus_per_replica_set && a.provenance == b.provenance && a.warnings == b.warnings;
}

bool same_field_value(const Topology& a, const Topology& b, const TopologyField& field) {
  switch (field.kind) {
    case FieldKind::LauncherName:
      return a.launcher == b.launcher;
    case FieldKind::Flag:
      return a.*field.flag == b.*field.flag;
    case FieldKind::Integer:
      return a.*field.integer == b.*field.integer;
    case FieldKind::OptionalInteger:
      return a.*field.optional_integer == b.*field.optional_integer;
  }
  return false;
}

const TopologyField& topology_field(std::string_view name) {
  for (const auto& field : topology_fields) {
    if (field.name == name) return field;
  }
  throw std::out_of_range(fmt::format("no topology field '{}'", name));
}

std::optional<std::int64_t> field_integer(const Topology& topology, const TopologyField& field) {
  if (field.kind == FieldKind::Integer) return topology.*field.integer;
  if (field.kind == FieldKind::OptionalInteger && topology.*field.optional_integer) {
    return *(topology.*field.optional_integer);
  }
  return std::nullopt;
}

std::string field_text(const Topology& topology, const TopologyField& field, std::string_view yes, std::string_view no) {
  switch (field.kind) {
    case FieldKind::LauncherName:
      return std::string(launcher_name(topology.launcher));
    case FieldKind::Flag:
      return std::string(topology.*field.flag ? yes : no);
    case FieldKind::Integer:
    case FieldKind::OptionalInteger:
      break;
  }
  const auto value = field_integer(topology, field);
  return value ? std::to_string(*value) : std::string("unknown");
}

std::string provenance_of(const Topology& topology, std::string_view field) {
  const auto found = topology.provenance.find(std::string(field));
  return found == topology.provenance.end() ? std::string("unknown") : found->second;
}

std::string describe(const Topology& topology) {
  std::string text;
  for (const auto& field : topology_fields) {
    const auto value = field_text(topology, field);
    if (field.has_provenance) {
      text += fmt::format("{:<30} {:<12} ({})\n", field.name, value, provenance_of(topology, field.name));
    } else {
      text += fmt::format("{:<30} {}\n", field.name, value);
    }
  }
  if (topology.warnings.empty()) {
    text += "warnings: none\n";
  } else {
    text += "warnings:\n";
    for (const auto& warning : topology.warnings) text += fmt::format("  - {}\n", warning);
  }
  return text;
}

std::ostream& operator<<(std::ostream& out, const Topology& topology) { return out << describe(topology); }

}  // namespace popdist
