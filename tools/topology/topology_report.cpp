#include "topology/topology_report.hpp"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "common/box_diagram.hpp"
#include "popdist/error.hpp"
#include "popdist/topology_fields.hpp"
#include "topology/text_table.hpp"

namespace popdist::cli::topology_cmd {
namespace {

std::string host_label(const std::optional<int>& host_index) {
  return host_index ? "host " + std::to_string(*host_index) : std::string("host ? (not given by the launcher)");
}

std::string replica_range_text(int offset, int count) { return index_range(offset, count); }

// The device id, or why there is none (the report still shows everything else).
std::string device_id_text(const Topology& t) {
  try {
    return std::to_string(device_id(t));
  } catch (const TopologyError&) {
    return "none (" + std::to_string(static_cast<std::int64_t>(t.num_local_replicas) * t.ipus_per_replica) +
           " devices per instance is not 1 or a power of two)";
  }
}

std::string warnings_section(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return "Warnings: none\n";
  std::string out = "Warnings:\n";
  for (const auto& warning : warnings) out += "  - " + warning + "\n";
  return out;
}

std::string instance_box(const Topology& t, const DeviceRange& ordinals) {
  std::vector<DiagramRow> rows;
  const bool one_cell_per_device = ordinals.count <= kMaxBoxColumns;
  const int columns = one_cell_per_device ? static_cast<int>(ordinals.count) : 1;
  rows.push_back({"hosts", {{host_label(t.host_index), columns}}});
  rows.push_back({"instances",
                  {{"instance " + std::to_string(t.instance_index) + " (local " + std::to_string(t.local_instance_index) +
                        " of " + std::to_string(t.num_local_instances) + ")",
                    columns}}});
  DiagramRow replicas{"replicas", {}};
  DiagramRow device_row{"devices", {}};
  if (one_cell_per_device) {
    for (int r = 0; r < t.num_local_replicas; ++r) {
      replicas.cells.push_back({std::to_string(t.replica_index_offset + r), t.ipus_per_replica});
    }
    for (std::int64_t d = 0; d < ordinals.count; ++d) device_row.cells.push_back({std::to_string(ordinals.first + d), 1});
  } else {
    replicas.cells.push_back({replica_range_text(t.replica_index_offset, t.num_local_replicas), 1});
    device_row.cells.push_back({index_range(ordinals.first, ordinals.count), 1});
  }
  rows.push_back(std::move(replicas));
  rows.push_back(std::move(device_row));
  return render_box_diagram("popdist topology: this instance", rows);
}

/// The box for the job, hosts in the summary's order and each host's instances ascending, so a
/// host's cell spans its instances even when the launcher placed them round-robin.
std::string job_box(const JobSummary& job) {
  int total_replicas_listed = 0;
  for (const auto& view : job.instances) total_replicas_listed += view.topology.num_local_replicas;
  const bool one_column_per_replica = total_replicas_listed <= kMaxBoxColumns;
  if (!one_column_per_replica && static_cast<int>(job.instances.size()) > kMaxBoxColumns) {
    return "(no box for " + std::to_string(job.instances.size()) + " instances: see the table)\n";
  }
  DiagramRow hosts{"hosts", {}};
  DiagramRow instances{"instances", {}};
  DiagramRow replicas{"replicas", {}};
  for (const HostSummary& host : job.hosts) {
    int host_columns = 0;
    for (int i : host.instances) {
      const Topology& t = job.instances[static_cast<std::size_t>(i)].topology;
      const int columns = one_column_per_replica ? t.num_local_replicas : 1;
      host_columns += columns;
      instances.cells.push_back({std::to_string(i), columns});
      if (one_column_per_replica) {
        for (int r = 0; r < t.num_local_replicas; ++r) replicas.cells.push_back({std::to_string(t.replica_index_offset + r), 1});
      } else {
        replicas.cells.push_back({replica_range_text(t.replica_index_offset, t.num_local_replicas), 1});
      }
    }
    std::string label = host.hostname.empty() ? host_label(host.host_index) : host.hostname;
    if (host.host_index && !host.hostname.empty()) label += " (" + std::to_string(*host.host_index) + ")";
    hosts.cells.push_back({label, host_columns});
  }
  return render_box_diagram("popdist topology: " + std::to_string(job.instances.size()) +
                                (job.instances.size() == 1 ? " instance on " : " instances on ") +
                                std::to_string(job.hosts.size()) + (job.hosts.size() == 1 ? " host" : " hosts"),
                            {hosts, instances, replicas});
}

}  // namespace

std::string instance_report(const Topology& t) {
  // A range, not a list: a topology of 2 x 2^30 devices must not allocate them to print them.
  const DeviceRange ordinals = local_device_range(t);
  const std::string id = device_id_text(t);
  std::string out = instance_box(t, ordinals);
  out += "\nInstance " + std::to_string(t.instance_index) + " of " + std::to_string(t.num_instances) + " (launcher " +
         std::string(launcher_name(t.launcher)) + "): " + (t.num_local_replicas == 1 ? "replica " : "replicas ") +
         replica_range_text(t.replica_index_offset, t.num_local_replicas) + " of " + std::to_string(t.num_total_replicas) +
         ", " + std::to_string(t.ipus_per_replica) + (t.ipus_per_replica == 1 ? " device" : " devices") +
         " per replica, device id " + id + "\n\n";

  std::vector<std::vector<std::string>> rows;
  std::map<std::string, std::string> unlisted = t.provenance;  // provenance of fields not in the table
  for (const auto& field : topology_fields) {
    const auto source = t.provenance.find(std::string(field.name));
    rows.push_back({std::string(field.name), field_text(t, field),
                    source != t.provenance.end() ? source->second : "-"});
    unlisted.erase(std::string(field.name));
  }
  // Computed here from the fields above, not detected: their source is "derived".
  rows.push_back({"device_id", id, "derived"});
  rows.push_back({"local_device_ordinals", index_range(ordinals.first, ordinals.count), "derived"});
  for (const auto& [field, source] : unlisted) rows.push_back({field, "", source});
  out += render_text_table({"field", "value", "source"}, rows);
  out += "\n" + warnings_section(t.warnings);
  return out;
}

std::string job_report(const JobSummary& job) {
  std::string out = job.instances.empty() ? std::string() : job_box(job) + "\n";
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < job.instances.size(); ++i) {
    const Topology& t = job.instances[i].topology;
    rows.push_back({std::to_string(i), job.instances[i].hostname.empty() ? "?" : job.instances[i].hostname,
                    t.host_index ? std::to_string(*t.host_index) : "?",
                    std::to_string(t.local_instance_index) + "/" + std::to_string(t.num_local_instances),
                    "[" + std::to_string(t.replica_index_offset) + ", " +
                        std::to_string(static_cast<long long>(t.replica_index_offset) + t.num_local_replicas) + ")",
                    std::to_string(t.num_total_replicas), std::to_string(t.ipus_per_replica),
                    device_id_text(t), std::string(launcher_name(t.launcher))});
  }
  out += render_text_table({"instance", "hostname", "host index", "local index/count", "replicas", "total",
                            "devices/replica", "device id", "launcher"},
                           rows);

  out += "\n";
  if (job.anomalies.empty()) {
    out += "Anomalies: none\n";
  } else {
    out += "Anomalies:\n";
    for (const auto& anomaly : job.anomalies) out += "  - " + anomaly + "\n";
  }
  // The same warning usually comes from every instance (one environment, one launcher): list it once.
  std::map<std::string, std::vector<int>> instances_by_warning;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < job.instances.size(); ++i) {
    for (const auto& warning : job.instances[i].topology.warnings) {
      auto& instances = instances_by_warning[warning];
      if (instances.empty()) order.push_back(warning);
      instances.push_back(static_cast<int>(i));
    }
  }
  if (order.empty()) {
    out += "Warnings: none\n";
  } else {
    out += "Warnings:\n";
    for (const auto& warning : order) {
      const auto& instances = instances_by_warning[warning];
      out += "  - " + std::string(instances.size() == 1 ? "instance " : "instances ") + format_index_list(instances) +
             ": " + warning + "\n";
    }
  }
  return out;
}

}  // namespace popdist::cli::topology_cmd
