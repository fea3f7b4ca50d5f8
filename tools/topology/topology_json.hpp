#pragma once
// The JSON documents of `popdist topology --json` (one instance's view) and
// `popdist topology --all --json` (the whole job). The per-instance keys are the same as those
// of the Python package's popdist.topology().to_dict().

#include <string>

#include "popdist/topology.hpp"
#include "topology/job_summary.hpp"
#include "topology/json_writer.hpp"

namespace popdist::cli::topology_cmd {

/// Writes the members of one instance's view (launcher, instance_index, ..., provenance,
/// warnings) into the object `json` has open.
void write_topology_members(JsonWriter& json, const Topology& topology);

/// One instance's view as a JSON object (pretty-printed, no trailing newline).
[[nodiscard]] std::string topology_to_json(const Topology& topology);

/// The job as {"num_instances", "num_hosts", "hosts": [...], "instances": [...], "anomalies": [...]};
/// each instance object has the keys of topology_to_json() plus "hostname".
[[nodiscard]] std::string job_to_json(const JobSummary& job);

}  // namespace popdist::cli::topology_cmd
