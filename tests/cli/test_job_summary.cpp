// `popdist topology --all`'s view of the job, from hand-made instance views: hosts grouped by
// host index, and every kind of finding of the job check named with the instances and values
// involved. Errors (which init() refuses) and warnings alike are listed as anomalies.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "topology/job_summary.hpp"
#include "topology/topology_json.hpp"

using popdist::InstanceView;
using popdist::Launcher;
using popdist::Topology;
using popdist::cli::topology_cmd::format_index_list;
using popdist::cli::topology_cmd::JobSummary;
using popdist::cli::topology_cmd::summarize_job;

namespace {

/// A sane job: `per_host[h]` instances on host h (hostnames "h0", "h1", ...), `local` replicas each.
std::vector<InstanceView> job(const std::vector<int>& per_host, int local = 1, int ipus = 1) {
  int instances = 0;
  for (int n : per_host) instances += n;
  std::vector<InstanceView> views;
  for (std::size_t h = 0; h < per_host.size(); ++h) {
    for (int k = 0; k < per_host[h]; ++k) {
      Topology t;
      t.launcher = Launcher::OpenMpi;
      t.instance_index = static_cast<int>(views.size());
      t.num_instances = instances;
      t.local_instance_index = k;
      t.num_local_instances = per_host[h];
      t.host_index = static_cast<int>(h);
      t.num_local_replicas = local;
      t.num_total_replicas = local * instances;
      t.replica_index_offset = t.instance_index * local;
      t.ipus_per_replica = ipus;
      views.push_back({t, "h" + std::to_string(h)});
    }
  }
  return views;
}

bool mentions(const JobSummary& summary, const std::string& text) {
  for (const auto& anomaly : summary.anomalies) {
    if (anomaly.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string all_anomalies(const JobSummary& summary) {
  std::string text;
  for (const auto& anomaly : summary.anomalies) text += anomaly + "\n";
  return text;
}

}  // namespace

TEST_CASE("format_index_list collapses runs", "[job]") {
  CHECK(format_index_list({}) == "");
  CHECK(format_index_list({3}) == "3");
  CHECK(format_index_list({0, 1, 2}) == "0-2");
  CHECK(format_index_list({7, 0, 2, 1, 5, 8}) == "0-2, 5, 7-8");
  CHECK(format_index_list({1, 3, 5}) == "1, 3, 5");
  CHECK(format_index_list({2147483646, 2147483647}) == "2147483646-2147483647");  // no overflow at INT_MAX
}

TEST_CASE("a sane job has no anomalies and its hosts in order", "[job]") {
  for (const auto& layout : std::vector<std::vector<int>>{{1}, {4}, {2, 2}, {3, 1}, {1, 1, 1, 1}, {5, 3, 8}}) {
    const JobSummary summary = summarize_job(job(layout, 2, 2));
    INFO(all_anomalies(summary));
    CHECK(summary.anomalies.empty());
    REQUIRE(summary.hosts.size() == layout.size());
    int next = 0;
    for (std::size_t h = 0; h < layout.size(); ++h) {
      CHECK(summary.hosts[h].host_index == static_cast<int>(h));
      CHECK(summary.hosts[h].hostname == "h" + std::to_string(h));
      REQUIRE(summary.hosts[h].instances.size() == static_cast<std::size_t>(layout[h]));
      for (int i : summary.hosts[h].instances) CHECK(i == next++);
    }
  }
}

TEST_CASE("round-robin placement is not an anomaly: hosts list their instances", "[job]") {
  auto views = job({2, 2});
  // instances 0, 2 on host 0 and 1, 3 on host 1 (mpirun --map-by node)
  for (int i = 0; i < 4; ++i) {
    views[static_cast<std::size_t>(i)].topology.host_index = i % 2;
    views[static_cast<std::size_t>(i)].topology.local_instance_index = i / 2;
    views[static_cast<std::size_t>(i)].hostname = "h" + std::to_string(i % 2);
  }
  const JobSummary summary = summarize_job(views);
  INFO(all_anomalies(summary));
  CHECK(summary.anomalies.empty());
  REQUIRE(summary.hosts.size() == 2);
  CHECK(summary.hosts[0].instances == std::vector<int>{0, 2});
  CHECK(summary.hosts[1].instances == std::vector<int>{1, 3});
}

TEST_CASE("instances that disagree on a job-wide value are named with their values", "[job]") {
  SECTION("total replicas") {
    auto views = job({4});
    views[3].topology.num_total_replicas = 6;
    const auto summary = summarize_job(views);
    CHECK(mentions(summary, "the instances disagree about the total number of replicas (POPDIST_NUM_TOTAL_REPLICAS): instances 0-2 say 4; "
                            "instance 3 says 6"));
  }
  SECTION("devices per replica") {
    auto views = job({2, 2}, 1, 2);
    views[1].topology.ipus_per_replica = 4;
    views[2].topology.ipus_per_replica = 4;
    CHECK(mentions(summarize_job(views), "the number of devices per replica (POPDIST_NUM_IPUS_PER_REPLICA): instances 0, 3 say 2; "
                                         "instances 1-2 say 4"));
  }
  SECTION("launcher") {
    auto views = job({2});
    views[1].topology.launcher = Launcher::Slurm;
    CHECK(mentions(summarize_job(views), "instances disagree on launcher: openmpi (instance 0), slurm (instance 1)"));
  }
  SECTION("uniformity") {
    auto views = job({2});
    views[0].topology.uniform_replicas_per_instance = false;
    CHECK(mentions(summarize_job(views), "instances disagree on uniform_replicas_per_instance"));
  }
  SECTION("the number of instances") {
    auto views = job({3});
    views[2].topology.num_instances = 4;
    CHECK(mentions(summarize_job(views), "instance 2 (MPI rank 2) counts 4 instances but MPI has 3 processes"));
  }
}

TEST_CASE("a view at the wrong position is reported", "[job]") {
  auto views = job({2});
  views[1].topology.instance_index = 0;
  CHECK(mentions(summarize_job(views), "MPI ranks 0, 1 all claim instance index 0"));
  views[0].topology.instance_index = 1;
  CHECK(mentions(summarize_job(views), "MPI rank 0 is instance 1"));
}

TEST_CASE("replica ranges must tile 0..total-1", "[job]") {
  SECTION("a gap in the middle") {
    auto views = job({3}, 2);  // [0,2) [2,4) [4,6)
    views[1].topology.num_local_replicas = 1;  // [2,3): replica 3 is orphaned
    CHECK(mentions(summarize_job(views), "replica 3 driven by no instance"));
  }
  SECTION("a gap at the end") {
    auto views = job({2}, 2);
    views[1].topology.num_total_replicas = views[0].topology.num_total_replicas = 7;
    CHECK(mentions(summarize_job(views), "replicas 4-6 driven by no instance"));
  }
  SECTION("a gap at the start") {
    auto views = job({2}, 2);
    views[0].topology.replica_index_offset = 1;
    views[0].topology.num_local_replicas = 1;
    CHECK(mentions(summarize_job(views), "replica 0 driven by no instance"));
  }
  SECTION("an overlap") {
    auto views = job({3}, 2);
    views[2].topology.replica_index_offset = 3;  // [3,5) overlaps instance 1's [2,4)
    const auto summary = summarize_job(views);
    CHECK(mentions(summary, "replica 3 driven by both instance 1 (replicas [2, 4)) and instance 2 (replicas [3, 5))"));
    CHECK(mentions(summary, "replica 5 driven by no instance"));
  }
  SECTION("beyond the total") {
    auto views = job({2}, 2);
    views[1].topology.num_local_replicas = 3;  // [2,5) of 4
    CHECK(mentions(summarize_job(views), "instance 1 drives replicas up to 4 but the job has 4 replicas"));
  }
  SECTION("non-uniform ranges that tile are fine") {
    auto views = job({2});
    views[0].topology.num_local_replicas = 1;
    views[1].topology.num_local_replicas = 3;
    views[1].topology.replica_index_offset = 1;
    for (auto& v : views) v.topology.num_total_replicas = 4;
    const auto summary = summarize_job(views);
    INFO(all_anomalies(summary));
    CHECK(summary.anomalies.empty());
  }
}

TEST_CASE("host anomalies", "[job]") {
  SECTION("local indices not 0..n-1") {
    auto views = job({3, 1});
    views[2].topology.local_instance_index = 3;
    CHECK(mentions(summarize_job(views),
                   "host 0 (h0) runs instances 0-2 with local instance indices 0, 1, 3 instead of 0-2"));
  }
  SECTION("a duplicated local index") {
    auto views = job({2, 2});
    views[3].topology.local_instance_index = 0;
    CHECK(mentions(summarize_job(views), "host 1 (h1) runs instances 2-3 with local instance indices 0, 0 instead of 0-1"));
  }
  SECTION("an instance that miscounts its host's instances") {
    auto views = job({3, 1});
    views[3].topology.num_local_instances = 2;
    CHECK(mentions(summarize_job(views), "instance 3 counts 2 local instances but host 1 (h1) runs 1"));
  }
  SECTION("one host index, several hostnames") {
    auto views = job({2});
    views[1].hostname = "other";
    CHECK(mentions(summarize_job(views), "host 0 has several hostnames: h0, other"));
  }
  SECTION("one hostname, several host indices") {
    auto views = job({1, 1});
    views[1].hostname = "h0";
    CHECK(mentions(summarize_job(views), "hostname h0 has several host indices: 0-1"));
  }
  SECTION("host indices with a hole") {
    auto views = job({1, 1});
    views[1].topology.host_index = 2;
    CHECK(mentions(summarize_job(views), "host indices 0, 2 are not 0-1"));
  }
  SECTION("unknown host indices group by hostname and are not an anomaly by themselves") {
    auto views = job({2, 1});
    for (auto& v : views) v.topology.host_index.reset();
    const auto summary = summarize_job(views);
    INFO(all_anomalies(summary));
    CHECK(summary.anomalies.empty());
    REQUIRE(summary.hosts.size() == 2);
    CHECK_FALSE(summary.hosts[0].host_index.has_value());
    CHECK(summary.hosts[0].hostname == "h0");
    CHECK(summary.hosts[0].instances == std::vector<int>{0, 1});
  }
}

TEST_CASE("no views at all is itself an anomaly, not a crash", "[job]") {
  const auto summary = summarize_job({});
  CHECK(mentions(summary, "no instance reported a view"));
  CHECK(summary.hosts.empty());
}

TEST_CASE("the job's JSON lists hosts, instances with hostname, and anomalies", "[job][json]") {
  auto views = job({1, 1});
  views[1].topology.num_total_replicas = 3;
  const std::string text = popdist::cli::topology_cmd::job_to_json(summarize_job(views));
  CHECK(text.find("\"num_instances\": 2") != std::string::npos);
  CHECK(text.find("\"num_hosts\": 2") != std::string::npos);
  CHECK(text.find("\"hostname\": \"h1\"") != std::string::npos);
  CHECK(text.find("\"anomalies\": [\n    \"the instances disagree about the total number of replicas") != std::string::npos);
}

TEST_CASE("only broken rules are errors: odd host layouts are warnings", "[job]") {
  auto untiled = job({2}, 2);
  untiled[1].topology.replica_index_offset = 1;
  CHECK(summarize_job(untiled).has_errors);
  auto miscounted = job({2});
  miscounted[1].topology.num_local_instances = 3;
  const auto summary = summarize_job(miscounted);
  CHECK(mentions(summary, "instance 1 counts 3 local instances"));
  CHECK_FALSE(summary.has_errors);
  CHECK_FALSE(summarize_job(job({2, 2})).has_errors);
}
