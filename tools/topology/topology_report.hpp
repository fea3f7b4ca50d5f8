#pragma once
// The human-readable output of `popdist topology` (one instance's view) and
// `popdist topology --all` (the whole job): a PopRun-like box, then the details in columns.

#include <string>

#include "popdist/topology.hpp"
#include "topology/job_summary.hpp"

namespace popdist::cli::topology_cmd {

/// This instance's view: the box (its host, itself, its replicas and device ordinals), a
/// one-line summary, every field with its value and provenance, and the warnings.
[[nodiscard]] std::string instance_report(const Topology& topology);

/// The job: the box (hosts, instances, replicas), one row per instance (hostname, host index,
/// local index/count, replica range, devices per replica, device id), then the anomalies and
/// the instances' warnings.
[[nodiscard]] std::string job_report(const JobSummary& job);

}  // namespace popdist::cli::topology_cmd
