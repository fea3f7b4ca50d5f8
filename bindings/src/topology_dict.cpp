#include "topology_dict.hpp"

#include <pybind11/stl.h>

#include <string>

#include "popdist/error.hpp"
#include "popdist/topology_fields.hpp"

namespace py = pybind11;

namespace popdist::python {

py::dict topology_to_dict(const Topology& topology) {
  py::dict d;
  for (const auto& field : topology_fields) {
    const py::str key(field.name.data(), field.name.size());
    if (field.kind == FieldKind::LauncherName) {
      d[key] = std::string(launcher_name(topology.launcher));
    } else if (field.kind == FieldKind::Flag) {
      d[key] = topology.*field.flag;
    } else if (const auto number = field_integer(topology, field)) {
      d[key] = *number;
    } else {
      d[key] = py::none();  // an optional field without a value (the host index before init)
    }
  }
  try {
    d["device_id"] = device_id(topology);
  } catch (const popdist::TopologyError&) {
    d["device_id"] = py::none();  // the instance's devices are not 1 or a power of two: no id
  }
  d["provenance"] = py::cast(topology.provenance);
  d["warnings"] = py::cast(topology.warnings);
  d["ipus_per_replica_set"] = topology.ipus_per_replica_set;
  return d;
}

Topology topology_from_object(const py::handle& object) {
  py::dict d = py::hasattr(object, "_fields") ? py::dict(object.attr("_fields")) : py::dict(py::reinterpret_borrow<py::object>(object));
  Topology t;
  for (const auto& field : topology_fields) {
    const py::str key(field.name.data(), field.name.size());
    if (!d.contains(key)) continue;
    const py::object value = d[key];
    switch (field.kind) {
      case FieldKind::LauncherName: {
        const auto name = value.cast<std::string>();
        const auto launcher = parse_launcher_name(name);
        if (!launcher) throw UsageError("topology: unknown launcher '" + name + "'");
        t.launcher = *launcher;
        break;
      }
      case FieldKind::Flag:
        t.*field.flag = value.cast<bool>();
        break;
      case FieldKind::Integer:
        t.*field.integer = value.cast<int>();
        break;
      case FieldKind::OptionalInteger:
        t.*field.optional_integer = value.is_none() ? std::nullopt : std::optional<int>(value.cast<int>());
        break;
    }
  }
  if (d.contains("ipus_per_replica_set")) t.ipus_per_replica_set = d["ipus_per_replica_set"].cast<bool>();
  if (d.contains("provenance")) t.provenance = d["provenance"].cast<std::map<std::string, std::string>>();
  if (d.contains("warnings")) t.warnings = d["warnings"].cast<std::vector<std::string>>();
  return t;
}

}  // namespace popdist::python
