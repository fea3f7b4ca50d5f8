#pragma once
/// @file job_check.hpp
/// The cross-instance check of a job (design.md §3.3), as one pure function over every instance's
/// view. init() runs it when its reductions find something amiss and throws its errors;
/// `popdist topology --all` runs it over the gathered views and prints every finding. No MPI.

#include <optional>
#include <string>
#include <vector>

#include "popdist/topology.hpp"

namespace popdist {

/// One instance's view of the job.
struct InstanceView {
  Topology topology;
  std::string hostname;  ///< empty when it was not gathered
};

/// One host of the job and the instances running on it.
struct JobHost {
  std::string hostname;           ///< as the instances reported it (may be empty when unknown)
  std::optional<int> host_index;  ///< std::nullopt when no instance on it knows its index
  std::vector<int> instances;     ///< ascending instance indices
};

/// A finding of the job check. Errors break the rules of design.md §3.3 (init() refuses the job);
/// warnings are odd host layouts and disagreements that popdist can live with.
struct JobFinding {
  bool error = true;
  std::string text;
};

struct JobCheck {
  std::vector<JobHost> hosts;         ///< ascending host index (unknown indices last, by hostname)
  std::vector<JobFinding> findings;   ///< errors first, then warnings; empty for a sane job
  [[nodiscard]] bool has_errors() const noexcept;
  /// The errors joined by "; " (empty when there are none).
  [[nodiscard]] std::string errors_text() const;
};

/// Checks `views` (position i = instance i = MPI rank i) against each other. Errors: an instance
/// whose index is not its position, or that counts another number of instances; instances that
/// disagree on the total replicas or devices per replica; replica ranges that leave gaps, overlap
/// or run past the total. Warnings: disagreement on the launcher or uniformity; a host whose
/// local indices are not 0..n-1 or whose instances miscount themselves; a hostname with several
/// host indices (or the reverse); host indices that are not 0..hosts-1. Every instance that runs
/// it on the same views reaches the same verdict.
[[nodiscard]] JobCheck check_job(const std::vector<InstanceView>& views);

/// "0-2, 5, 7-8": ascending indices with runs collapsed (the input need not be sorted).
[[nodiscard]] std::string format_index_list(std::vector<int> indices);

}  // namespace popdist
