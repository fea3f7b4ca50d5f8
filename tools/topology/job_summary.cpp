#include "job_summary.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace popdist::cli::topology_cmd {
namespace {

std::string plural(std::size_t count, const char* singular, const char* plural_form) {
  return count == 1 ? singular : plural_form;
}

std::string describe_instances(const std::vector<int>& instances) {
  return plural(instances.size(), "instance ", "instances ") + format_index_list(instances);
}

/// One anomaly when the instances do not all report the same value of one field:
/// "instances disagree on num_total_replicas: 4 (instances 0-2), 6 (instance 3)".
template <class Value>
void check_agreement(const std::vector<InstanceView>& views, const char* field,
                     const std::function<Value(const Topology&)>& get,
                     const std::function<std::string(const Value&)>& show, std::vector<std::string>& anomalies) {
  std::map<Value, std::vector<int>> by_value;
  for (std::size_t i = 0; i < views.size(); ++i) by_value[get(views[i].topology)].push_back(static_cast<int>(i));
  if (by_value.size() <= 1) return;
  std::string message = std::string("instances disagree on ") + field + ":";
  bool first = true;
  for (const auto& [value, instances] : by_value) {
    message += (first ? " " : ", ") + show(value) + " (" + describe_instances(instances) + ")";
    first = false;
  }
  anomalies.push_back(message);
}

std::string show_int(const int& value) { return std::to_string(value); }

std::string show_range(int first, int last) {
  return first == last ? "replica " + std::to_string(first)
                       : "replicas " + std::to_string(first) + "-" + std::to_string(last);
}

/// The replica ranges [offset, offset + local) must tile 0..total-1 exactly (DESIGN.md 3.3).
void check_replica_tiling(const std::vector<InstanceView>& views, std::vector<std::string>& anomalies) {
  struct Range {
    long long begin, end;  // [begin, end); long long: offset + local may exceed INT_MAX in a broken view
    int instance;
  };
  std::vector<Range> ranges;
  for (std::size_t i = 0; i < views.size(); ++i) {
    const Topology& t = views[i].topology;
    ranges.push_back({t.replica_index_offset, static_cast<long long>(t.replica_index_offset) + t.num_local_replicas,
                      static_cast<int>(i)});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return std::tie(a.begin, a.instance) < std::tie(b.begin, b.instance); });
  const long long total = views.front().topology.num_total_replicas;  // disagreement is reported separately
  long long covered = 0;  // replicas [0, covered) are driven by the ranges seen so far
  int last_instance = -1;
  for (const Range& r : ranges) {
    if (r.begin > covered) {
      anomalies.push_back(show_range(static_cast<int>(covered), static_cast<int>(r.begin - 1)) +
                          " driven by no instance");
    } else if (r.begin < covered) {
      const long long overlap_end = std::min(covered, r.end) - 1;
      anomalies.push_back(show_range(static_cast<int>(r.begin), static_cast<int>(overlap_end)) +
                          " driven by both instance " + std::to_string(last_instance) + " and instance " +
                          std::to_string(r.instance));
    }
    if (r.end > covered) {
      covered = r.end;
      last_instance = r.instance;
    }
  }
  if (covered < total) {
    anomalies.push_back(show_range(static_cast<int>(covered), static_cast<int>(total - 1)) + " driven by no instance");
  } else if (covered > total) {
    anomalies.push_back("instance " + std::to_string(last_instance) + " drives replicas up to " +
                        std::to_string(covered - 1) + " but the job has " + std::to_string(total) + " replicas");
  }
}

std::string host_name_for_messages(const HostSummary& host) {
  std::string name = host.host_index ? "host " + std::to_string(*host.host_index) : std::string("host");
  if (!host.hostname.empty()) name += " (" + host.hostname + ")";
  return name;
}

/// Within a host, the local indices must be exactly 0..n-1 and every instance must count n.
void check_host(const HostSummary& host, const std::vector<InstanceView>& views, std::vector<std::string>& anomalies) {
  const int count = static_cast<int>(host.instances.size());
  std::vector<int> local_indices;
  for (int i : host.instances) local_indices.push_back(views[static_cast<std::size_t>(i)].topology.local_instance_index);
  std::vector<int> sorted = local_indices;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> expected(host.instances.size());
  for (int k = 0; k < count; ++k) expected[static_cast<std::size_t>(k)] = k;
  if (sorted != expected) {
    std::string listed;
    for (std::size_t k = 0; k < sorted.size(); ++k) listed += (k ? ", " : "") + std::to_string(sorted[k]);
    anomalies.push_back(host_name_for_messages(host) + " runs " + describe_instances(host.instances) +
                        " with local instance indices " + listed + " instead of 0-" + std::to_string(count - 1));
  }
  for (int i : host.instances) {
    const int counted = views[static_cast<std::size_t>(i)].topology.num_local_instances;
    if (counted != count) {
      anomalies.push_back("instance " + std::to_string(i) + " counts " + std::to_string(counted) +
                          " local instances but " + host_name_for_messages(host) + " runs " + std::to_string(count));
    }
  }
  std::set<std::string> hostnames;
  for (int i : host.instances) hostnames.insert(views[static_cast<std::size_t>(i)].hostname);
  if (host.host_index && hostnames.size() > 1) {
    std::string listed;
    for (const auto& name : hostnames) listed += (listed.empty() ? "" : ", ") + name;
    anomalies.push_back("host " + std::to_string(*host.host_index) + " has several hostnames: " + listed);
  }
}

std::vector<HostSummary> group_by_host(const std::vector<InstanceView>& views) {
  // Host index first: after init() it comes from MPI's shared-memory split, the ground truth for
  // "same host" (DESIGN.md 3.2). Only views without one fall back to their hostname.
  std::map<int, HostSummary> indexed;
  std::map<std::string, HostSummary> unindexed;
  for (std::size_t i = 0; i < views.size(); ++i) {
    const InstanceView& view = views[i];
    HostSummary& host = view.topology.host_index ? indexed[*view.topology.host_index] : unindexed[view.hostname];
    if (host.instances.empty()) {
      host.hostname = view.hostname;
      host.host_index = view.topology.host_index;
    }
    host.instances.push_back(static_cast<int>(i));
  }
  std::vector<HostSummary> hosts;
  for (auto& entry : indexed) hosts.push_back(std::move(entry.second));
  for (auto& entry : unindexed) hosts.push_back(std::move(entry.second));
  return hosts;
}

void check_hosts(const std::vector<HostSummary>& hosts, const std::vector<InstanceView>& views,
                 std::vector<std::string>& anomalies) {
  for (const HostSummary& host : hosts) check_host(host, views, anomalies);

  std::map<std::string, std::set<int>> indices_of_hostname;
  std::vector<int> indices;
  for (const HostSummary& host : hosts) {
    if (!host.host_index) continue;
    indices.push_back(*host.host_index);
    for (int i : host.instances) indices_of_hostname[views[static_cast<std::size_t>(i)].hostname].insert(*host.host_index);
  }
  for (const auto& [hostname, host_indices] : indices_of_hostname) {
    if (host_indices.size() > 1 && !hostname.empty()) {
      anomalies.push_back("hostname " + hostname + " has several host indices: " +
                          format_index_list({host_indices.begin(), host_indices.end()}));
    }
  }
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] != static_cast<int>(k)) {
      anomalies.push_back("host indices " + format_index_list(indices) + " are not 0-" +
                          std::to_string(indices.size() - 1));
      break;
    }
  }
}

}  // namespace

std::string format_index_list(std::vector<int> indices) {
  std::sort(indices.begin(), indices.end());
  std::string text;
  for (std::size_t k = 0; k < indices.size();) {
    std::size_t run_end = k;  // last position of the run of consecutive values starting at k
    while (run_end + 1 < indices.size() && static_cast<long long>(indices[run_end + 1]) == indices[run_end] + 1LL) {
      ++run_end;
    }
    if (!text.empty()) text += ", ";
    text += std::to_string(indices[k]);
    if (run_end > k) text += "-" + std::to_string(indices[run_end]);
    k = run_end + 1;
  }
  return text;
}

JobSummary summarize_job(std::vector<InstanceView> views) {
  JobSummary job;
  job.instances = std::move(views);
  const auto& v = job.instances;
  if (v.empty()) {
    job.anomalies.push_back("no instance reported a view");
    return job;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].topology.instance_index != static_cast<int>(i)) {
      job.anomalies.push_back("the view gathered at position " + std::to_string(i) + " reports instance index " +
                              std::to_string(v[i].topology.instance_index));
    }
    if (v[i].topology.num_instances != static_cast<int>(v.size())) {
      job.anomalies.push_back("instance " + std::to_string(i) + " counts " + std::to_string(v[i].topology.num_instances) +
                              " instances but " + std::to_string(v.size()) + " reported a view");
    }
  }
  check_agreement<std::string>(
      v, "launcher", [](const Topology& t) { return std::string(launcher_name(t.launcher)); },
      [](const std::string& s) { return s; }, job.anomalies);
  check_agreement<int>(v, "num_total_replicas", [](const Topology& t) { return t.num_total_replicas; }, show_int,
                       job.anomalies);
  check_agreement<int>(v, "ipus_per_replica", [](const Topology& t) { return t.ipus_per_replica; }, show_int,
                       job.anomalies);
  check_agreement<bool>(
      v, "uniform_replicas_per_instance", [](const Topology& t) { return t.uniform_replicas_per_instance; },
      [](const bool& b) { return std::string(b ? "true" : "false"); }, job.anomalies);
  check_replica_tiling(v, job.anomalies);
  job.hosts = group_by_host(v);
  check_hosts(job.hosts, v, job.anomalies);
  return job;
}

}  // namespace popdist::cli::topology_cmd
