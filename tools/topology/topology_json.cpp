#include "topology/topology_json.hpp"

#include <optional>
#include <sstream>

#include "popdist/error.hpp"
#include "popdist/topology_fields.hpp"

namespace popdist::cli::topology_cmd {

void write_topology_members(JsonWriter& json, const Topology& topology) {
  for (const auto& field : topology_fields) {
    json.key(field.name);
    if (field.kind == FieldKind::LauncherName) {
      json.value(launcher_name(topology.launcher));
    } else if (field.kind == FieldKind::Flag) {
      json.value(topology.*field.flag);
    } else if (const auto number = field_integer(topology, field)) {
      json.value(*number);
    } else {
      json.value(nullptr);  // host_index unknown
    }
  }
  // null when the instance's devices are not 1 or a power of two (no device group, no id).
  std::optional<std::int64_t> id;
  try {
    id = device_id(topology);
  } catch (const TopologyError&) {
  }
  json.key("device_id");
  if (id) {
    json.value(*id);
  } else {
    json.value(nullptr);
  }
  json.key("provenance").begin_object();
  for (const auto& [field, source] : topology.provenance) json.key(field).value(source);
  json.end_object();
  json.key("warnings").begin_array();
  for (const auto& warning : topology.warnings) json.value(warning);
  json.end_array();
}

std::string topology_to_json(const Topology& topology) {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_object();
  write_topology_members(json, topology);
  json.end_object();
  return out.str();
}

std::string job_to_json(const JobSummary& job) {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_object();
  json.key("num_instances").value(static_cast<std::int64_t>(job.instances.size()));
  json.key("num_hosts").value(static_cast<std::int64_t>(job.hosts.size()));
  json.key("hosts").begin_array();
  for (const HostSummary& host : job.hosts) {
    json.begin_object();
    json.key("hostname").value(host.hostname);
    json.key("host_index").value(host.host_index);
    json.key("instances").begin_array();
    for (int instance : host.instances) json.value(instance);
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.key("instances").begin_array();
  for (const InstanceView& view : job.instances) {
    json.begin_object();
    json.key("hostname").value(view.hostname);
    write_topology_members(json, view.topology);
    json.end_object();
  }
  json.end_array();
  json.key("anomalies").begin_array();
  for (const auto& anomaly : job.anomalies) json.value(anomaly);
  json.end_array();
  json.end_object();
  return out.str();
}

}  // namespace popdist::cli::topology_cmd
