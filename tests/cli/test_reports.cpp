// The human-readable reports: the key lines a person looks for.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "popdist/environment.hpp"
#include "topology/job_summary.hpp"
#include "topology/topology_json.hpp"
#include "topology/topology_report.hpp"

using namespace popdist::cli::topology_cmd;

namespace {
bool has_line(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex(pattern, std::regex::multiline));
}
}  // namespace

TEST_CASE("the instance report shows the box, the summary, provenance and warnings", "[report]") {
  popdist::Topology t = popdist::detect(popdist::lookup_in({{"SLURM_JOB_ID", "1"},
                                                            {"SLURM_STEP_ID", "0"},
                                                            {"SLURM_PROCID", "5"},
                                                            {"SLURM_STEP_NUM_TASKS", "6"},
                                                            {"SLURM_LOCALID", "1"},
                                                            {"SLURM_STEP_TASKS_PER_NODE", "4,2"},
                                                            {"SLURM_NODEID", "1"},
                                                            {"POPDIST_NUM_LOCAL_REPLICAS", "3"},
                                                            {"POPDIST_NUM_IPUS_PER_REPLICA", "1"}}));
  t.warnings.push_back("a warning for the test");
  const std::string report = instance_report(t);
  INFO(report);
  CHECK(has_line(report, R"(^\| hosts +\| +host 1 +\|$)"));
  CHECK(has_line(report, R"(^\| instances +\| +instance 5 \(local 1 of 2\) +\|$)"));
  CHECK(has_line(report, R"(^\| replicas +\| +15 +\| +16 +\| +17 +\|$)"));
  CHECK(has_line(report, R"(^\| devices +\| +3 +\| +4 +\| +5 +\|$)"));
  // 3 devices are no IPU group (1, 2, 4, 8, ...): the report says why there is no device id
  CHECK(has_line(report, R"(^Instance 5 of 6 \(launcher slurm\): replicas 15-17 of 18, 1 device per replica, device id none \(3 devices per instance is not 1 or a power of two\)$)"));
  CHECK(has_line(report, R"(^host_index +1 +SLURM_NODEID$)"));
  CHECK(has_line(report, R"(^num_local_replicas +3 +POPDIST_NUM_LOCAL_REPLICAS$)"));
  CHECK(has_line(report, R"(^local_device_ordinals +3-5 +derived$)"));
  CHECK(has_line(report, R"(^Warnings:\n  - a warning for the test$)"));
}

TEST_CASE("the instance report collapses many devices into ranges", "[report]") {
  popdist::Topology t;
  t.num_local_replicas = 16;
  t.num_total_replicas = 16;
  t.ipus_per_replica = 4;
  const std::string report = instance_report(t);
  INFO(report);
  CHECK(has_line(report, R"(^\| replicas +\| +0-15 +\|$)"));
  CHECK(has_line(report, R"(^\| devices +\| +0-63 +\|$)"));
  CHECK(report.size() < 4000);
}

TEST_CASE("the instance report of a huge instance allocates nothing per device", "[report]") {
  popdist::Topology t;  // POPDIST_NUM_LOCAL_REPLICAS=2 of 1,073,741,824 devices each
  t.num_local_replicas = 2;
  t.num_total_replicas = 2;
  t.ipus_per_replica = 1073741824;
  const std::string report = instance_report(t);
  INFO(report);
  CHECK(has_line(report, R"(^\| devices +\| +0-2147483647 +\|$)"));
  CHECK(has_line(report, R"(^local_device_ordinals +0-2147483647 +derived$)"));
  CHECK(report.size() < 4000);
}

TEST_CASE("the job report lists every instance once, then anomalies and grouped warnings", "[report]") {
  std::vector<popdist::InstanceView> views;
  for (int i = 0; i < 3; ++i) {
    popdist::Topology t;
    t.launcher = popdist::Launcher::OpenMpi;
    t.instance_index = i;
    t.num_instances = 3;
    t.local_instance_index = i < 2 ? i : 0;
    t.num_local_instances = i < 2 ? 2 : 1;
    t.host_index = i < 2 ? 0 : 1;
    t.num_total_replicas = 3;
    t.replica_index_offset = i;
    t.warnings.push_back("the same warning everywhere");
    views.push_back({t, i < 2 ? "alpha" : "beta"});
  }
  views[2].topology.warnings.push_back("only on instance 2");
  const std::string report = job_report(summarize_job(views));
  INFO(report);
  CHECK(has_line(report, R"(popdist topology: 3 instances on 2 hosts)"));
  CHECK(has_line(report, R"(^\| hosts +\| +alpha \(0\) +\| +beta \(1\) +\|$)"));
  CHECK(has_line(report, R"(^0 +alpha +0 +0/2 +\[0, 1\) +3 +1 +0 +openmpi$)"));
  CHECK(has_line(report, R"(^2 +beta +1 +0/1 +\[2, 3\) +3 +1 +2 +openmpi$)"));
  CHECK(has_line(report, R"(^Anomalies: none$)"));
  CHECK(has_line(report, R"(^  - instances 0-2: the same warning everywhere$)"));
  CHECK(has_line(report, R"(^  - instance 2: only on instance 2$)"));
}

TEST_CASE("a job too large for the box still gets its table", "[report]") {
  std::vector<popdist::InstanceView> views;
  for (int i = 0; i < 40; ++i) {
    popdist::Topology t;
    t.instance_index = i;
    t.num_instances = 40;
    t.num_total_replicas = 40;
    t.replica_index_offset = i;
    t.local_instance_index = i;
    t.num_local_instances = 40;
    views.push_back({t, "big"});
  }
  const std::string report = job_report(summarize_job(views));
  CHECK(has_line(report, R"(^\(no box for 40 instances: see the table\)$)"));
  CHECK(has_line(report, R"(^39 +big +0 +39/40 )"));
}
