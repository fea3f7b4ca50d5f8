#pragma once
// What `popdist topology --all` knows about the job once every instance's view is gathered:
// the views, the hosts they form, and the anomalies among them. Pure logic (no MPI), so every
// anomaly can be tested with hand-made views.

#include <optional>
#include <string>
#include <vector>

#include "popdist/runtime.hpp"

namespace popdist::cli::topology_cmd {

/// One host and the instances running on it.
struct HostSummary {
  std::string hostname;           ///< as the instances reported it (may be empty when unknown)
  std::optional<int> host_index;  ///< std::nullopt when no instance on it knows its index
  std::vector<int> instances;     ///< ascending instance indices
};

/// The job as instance 0 prints it.
struct JobSummary {
  std::vector<InstanceView> instances;  ///< by position in the gather (== instance index when sane)
  std::vector<HostSummary> hosts;       ///< ascending host index (unknown indices last, by hostname)
  std::vector<std::string> anomalies;   ///< disagreements between the views; empty for a sane job
};

/// Groups `views` by host and looks for anomalies: an instance whose index differs from its
/// position; instances that disagree on the launcher, the number of instances, the total
/// replicas, devices per replica or uniformity; replica ranges that leave gaps or overlap; a
/// host whose local instance indices are not 0..n-1 or whose instances miscount themselves; one
/// hostname with several host indices (or the reverse); host indices that are not 0..hosts-1.
[[nodiscard]] JobSummary summarize_job(std::vector<InstanceView> views);

/// "0-2, 5, 7-8": ascending indices with runs collapsed (the input need not be sorted).
[[nodiscard]] std::string format_index_list(std::vector<int> indices);

}  // namespace popdist::cli::topology_cmd
