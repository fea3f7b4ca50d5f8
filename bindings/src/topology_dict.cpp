#include "topology_dict.hpp"

#include <pybind11/stl.h>

#include <string>

#include "popdist/error.hpp"

namespace py = pybind11;

namespace popdist::python {

py::dict topology_to_dict(const Topology& topology) {
  py::dict d;
  d["launcher"] = std::string(launcher_name(topology.launcher));
  d["instance_index"] = topology.instance_index;
  d["num_instances"] = topology.num_instances;
  d["local_instance_index"] = topology.local_instance_index;
  d["num_local_instances"] = topology.num_local_instances;
  d["host_index"] = topology.host_index ? py::object(py::int_(*topology.host_index)) : py::object(py::none());
  d["num_local_replicas"] = topology.num_local_replicas;
  d["num_total_replicas"] = topology.num_total_replicas;
  d["replica_index_offset"] = topology.replica_index_offset;
  d["ipus_per_replica"] = topology.ipus_per_replica;
  d["uniform_replicas_per_instance"] = topology.uniform_replicas_per_instance;
  d["popdist_env_set"] = topology.popdist_env_set;
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
  auto get_int = [&](const char* key, int& field) {
    if (d.contains(key)) field = d[key].cast<int>();
  };
  auto get_bool = [&](const char* key, bool& field) {
    if (d.contains(key)) field = d[key].cast<bool>();
  };
  if (d.contains("launcher")) {
    auto name = d["launcher"].cast<std::string>();
    auto launcher = parse_launcher_name(name);
    if (!launcher) throw UsageError("topology: unknown launcher '" + name + "'");
    t.launcher = *launcher;
  }
  get_int("instance_index", t.instance_index);
  get_int("num_instances", t.num_instances);
  get_int("local_instance_index", t.local_instance_index);
  get_int("num_local_instances", t.num_local_instances);
  if (d.contains("host_index")) {
    py::object host = d["host_index"];
    t.host_index = host.is_none() ? std::nullopt : std::optional<int>(host.cast<int>());
  }
  get_int("num_local_replicas", t.num_local_replicas);
  get_int("num_total_replicas", t.num_total_replicas);
  get_int("replica_index_offset", t.replica_index_offset);
  get_int("ipus_per_replica", t.ipus_per_replica);
  get_bool("uniform_replicas_per_instance", t.uniform_replicas_per_instance);
  get_bool("popdist_env_set", t.popdist_env_set);
  get_bool("ipus_per_replica_set", t.ipus_per_replica_set);
  if (d.contains("provenance")) t.provenance = d["provenance"].cast<std::map<std::string, std::string>>();
  if (d.contains("warnings")) t.warnings = d["warnings"].cast<std::vector<std::string>>();
  return t;
}

}  // namespace popdist::python
