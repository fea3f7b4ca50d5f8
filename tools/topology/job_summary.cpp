#include "topology/job_summary.hpp"

#include <utility>

namespace popdist::cli::topology_cmd {

JobSummary summarize_survey(JobSurvey survey) {
  JobSummary job;
  job.instances = std::move(survey.views);
  job.hosts = std::move(survey.check.hosts);
  job.has_errors = survey.check.has_errors();
  for (auto& finding : survey.check.findings) job.anomalies.push_back(std::move(finding.text));
  return job;
}

JobSummary summarize_job(std::vector<InstanceView> views) {
  JobSurvey survey;
  survey.check = check_job(views);
  survey.views = std::move(views);
  return summarize_survey(std::move(survey));
}

}  // namespace popdist::cli::topology_cmd
