#pragma once
// What `popdist topology --all` prints about the job: the gathered views, the hosts they form,
// and the findings of the one job check (popdist/job_check.hpp, also run by init()).

#include <optional>
#include <string>
#include <vector>

#include "popdist/runtime.hpp"

namespace popdist::cli::topology_cmd {

/// One host and the instances running on it.
using HostSummary = JobHost;

/// The job as instance 0 prints it.
struct JobSummary {
  std::vector<InstanceView> instances;  ///< by position in the gather (== instance index when sane)
  std::vector<HostSummary> hosts;       ///< ascending host index (unknown indices last, by hostname)
  std::vector<std::string> anomalies;   ///< the job check's findings (errors first); empty for a sane job
  bool has_errors = false;              ///< some finding breaks design.md §3.3: init() refuses this job
};

/// The job check over `views`, for printing.
[[nodiscard]] JobSummary summarize_job(std::vector<InstanceView> views);
/// The same from a survey that already ran the check.
[[nodiscard]] JobSummary summarize_survey(JobSurvey survey);

using popdist::format_index_list;

}  // namespace popdist::cli::topology_cmd
