// The one job check (job_check.hpp): the rules of design.md §3.3 and the host-layout checks,
// collecting every finding instead of stopping at the first, so that `popdist topology --all`
// can show them all and init() can name them all. Pure logic over the instances' records, so it
// lives in the core (no MPI) and is tested without MPI.
#include "popdist/job_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace popdist {
namespace {

using Findings = std::vector<JobFinding>;

void error(Findings& findings, std::string text) { findings.push_back({true, std::move(text)}); }
void warning(Findings& findings, std::string text) { findings.push_back({false, std::move(text)}); }

std::string describe_instances(const std::vector<int>& instances) {
  return (instances.size() == 1 ? "instance " : "instances ") + format_index_list(instances);
}

/// "instances 0-2 say 4; instance 3 says 6": who holds which value.
template <class Value>
std::string who_says_what(const std::map<Value, std::vector<int>>& holders) {
  std::vector<std::string> parts;
  for (const auto& [value, instances] : holders) {
    parts.push_back(fmt::format("{} {} {}", describe_instances(instances), instances.size() == 1 ? "says" : "say", value));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

template <class Value>
std::map<Value, std::vector<int>> holders_of(const std::vector<InstanceView>& views,
                                             const std::function<Value(const Topology&)>& get) {
  std::map<Value, std::vector<int>> holders;
  for (std::size_t i = 0; i < views.size(); ++i) holders[get(views[i].topology)].push_back(static_cast<int>(i));
  return holders;
}

/// An error when the instances do not all see the same value of a job-wide setting.
void check_same_everywhere(const std::vector<InstanceView>& views, const std::function<int(const Topology&)>& get,
                           const char* what, const char* variable, Findings& findings) {
  const auto holders = holders_of<int>(views, get);
  if (holders.size() > 1) {
    error(findings, fmt::format("the instances disagree about {} ({}): {}; every instance must see the same value",
                                what, variable, who_says_what(holders)));
  }
}

/// A warning when the instances do not all report the same value of a field popdist can live with.
template <class Value>
void note_disagreement(const std::vector<InstanceView>& views, const char* field,
                       const std::function<Value(const Topology&)>& get,
                       const std::function<std::string(const Value&)>& show, Findings& findings) {
  const auto holders = holders_of<Value>(views, get);
  if (holders.size() <= 1) return;
  std::vector<std::string> parts;
  for (const auto& [value, instances] : holders) {
    parts.push_back(fmt::format("{} ({})", show(value), describe_instances(instances)));
  }
  warning(findings, fmt::format("instances disagree on {}: {}", field, fmt::join(parts, ", ")));
}

/// Instance index == position (== MPI rank: the registry names MPI ranks by instance index), and
/// every instance counts the instances there are.
void check_identities(const std::vector<InstanceView>& views, Findings& findings) {
  const auto n = static_cast<int>(views.size());
  std::map<int, std::vector<int>> positions_of_index;
  for (int rank = 0; rank < n; ++rank) {
    const auto& t = views[static_cast<std::size_t>(rank)].topology;
    if (t.num_instances != n) {
      error(findings, fmt::format("instance {} (MPI rank {}) counts {} instances but MPI has {} processes", rank, rank,
                                  t.num_instances, n));
    }
    positions_of_index[t.instance_index].push_back(rank);
  }
  bool permutation = true;
  for (const auto& [index, ranks] : positions_of_index) {
    if (ranks.size() > 1) {
      permutation = false;
      error(findings, fmt::format("instance indices are not a permutation of 0..{}: MPI ranks {} all claim instance "
                                  "index {}",
                                  n - 1, fmt::join(ranks, ", "), index));
    } else if (index < 0 || index >= n) {
      permutation = false;
      error(findings, fmt::format("instance indices are not a permutation of 0..{}: MPI rank {} claims instance "
                                  "index {}",
                                  n - 1, ranks.front(), index));
    }
  }
  if (!permutation) return;  // the permutation errors say it already
  for (int rank = 0; rank < n; ++rank) {
    const auto index = views[static_cast<std::size_t>(rank)].topology.instance_index;
    if (index != rank) {
      error(findings,
            fmt::format("MPI rank {} is instance {} by its launcher; popdist needs instance index == MPI rank", rank, index));
    }
  }
}

std::string show_range(long long first, long long last) {
  return first == last ? fmt::format("replica {}", first) : fmt::format("replicas {}-{}", first, last);
}

/// The replica ranges [offset, offset + local) must tile 0..total-1 exactly: sorted by offset,
/// each starts where the ones before ended, and the last ends at total.
void check_replica_tiling(const std::vector<InstanceView>& views, Findings& findings) {
  struct Range {
    long long begin, end;  // long long: offset + local may exceed INT_MAX in a broken view
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
  const long long total = views.front().topology.num_total_replicas;  // a disagreement is reported separately
  const auto prefix = fmt::format("the replica ranges do not tile 0..{}: ", total - 1);
  const auto owner = [&](const Range& r) {
    return fmt::format("instance {} (replicas [{}, {}))", r.instance, r.begin, r.end);
  };
  long long covered = 0;  // replicas [0, covered) are driven by the ranges seen so far
  const Range* last = nullptr;
  for (const Range& r : ranges) {
    if (r.begin > covered) {
      error(findings, prefix + show_range(covered, r.begin - 1) + " driven by no instance");
    } else if (r.begin < covered && last != nullptr) {
      error(findings, prefix + show_range(r.begin, std::min(covered, r.end) - 1) + " driven by both " + owner(*last) +
                          " and " + owner(r));
    }
    if (r.end > covered) {
      covered = r.end;
      last = &r;
    }
  }
  if (covered < total) {
    error(findings, prefix + show_range(covered, total - 1) + " driven by no instance");
  } else if (covered > total && last != nullptr) {
    error(findings, prefix + fmt::format("instance {} drives replicas up to {} but the job has {} replicas",
                                         last->instance, covered - 1, total));
  }
}

std::string host_name_for_messages(const JobHost& host) {
  std::string name = host.host_index ? "host " + std::to_string(*host.host_index) : std::string("host");
  if (!host.hostname.empty()) name += " (" + host.hostname + ")";
  return name;
}

/// Within a host, the local indices must be exactly 0..n-1 and every instance must count n.
void check_host(const JobHost& host, const std::vector<InstanceView>& views, Findings& findings) {
  const int count = static_cast<int>(host.instances.size());
  std::vector<int> sorted;
  for (int i : host.instances) sorted.push_back(views[static_cast<std::size_t>(i)].topology.local_instance_index);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> expected(host.instances.size());
  for (int k = 0; k < count; ++k) expected[static_cast<std::size_t>(k)] = k;
  if (sorted != expected) {
    warning(findings, fmt::format("{} runs {} with local instance indices {} instead of 0-{}", host_name_for_messages(host),
                                  describe_instances(host.instances), fmt::join(sorted, ", "), count - 1));
  }
  for (int i : host.instances) {
    const int counted = views[static_cast<std::size_t>(i)].topology.num_local_instances;
    if (counted != count) {
      warning(findings, fmt::format("instance {} counts {} local instances but {} runs {}", i, counted,
                                    host_name_for_messages(host), count));
    }
  }
  std::set<std::string> hostnames;
  for (int i : host.instances) hostnames.insert(views[static_cast<std::size_t>(i)].hostname);
  if (host.host_index && hostnames.size() > 1) {
    warning(findings, fmt::format("host {} has several hostnames: {}", *host.host_index, fmt::join(hostnames, ", ")));
  }
}

std::vector<JobHost> group_by_host(const std::vector<InstanceView>& views) {
  // Host index first: after init() it comes from MPI's shared-memory split, the ground truth for
  // "same host" (design.md §3.2). Only views without one fall back to their hostname.
  std::map<int, JobHost> indexed;
  std::map<std::string, JobHost> unindexed;
  for (std::size_t i = 0; i < views.size(); ++i) {
    const InstanceView& view = views[i];
    JobHost& host = view.topology.host_index ? indexed[*view.topology.host_index] : unindexed[view.hostname];
    if (host.instances.empty()) {
      host.hostname = view.hostname;
      host.host_index = view.topology.host_index;
    }
    host.instances.push_back(static_cast<int>(i));
  }
  std::vector<JobHost> hosts;
  for (auto& entry : indexed) hosts.push_back(std::move(entry.second));
  for (auto& entry : unindexed) hosts.push_back(std::move(entry.second));
  return hosts;
}

void check_hosts(const std::vector<JobHost>& hosts, const std::vector<InstanceView>& views, Findings& findings) {
  for (const JobHost& host : hosts) check_host(host, views, findings);
  std::map<std::string, std::set<int>> indices_of_hostname;
  std::vector<int> indices;
  for (const JobHost& host : hosts) {
    if (!host.host_index) continue;
    indices.push_back(*host.host_index);
    for (int i : host.instances) indices_of_hostname[views[static_cast<std::size_t>(i)].hostname].insert(*host.host_index);
  }
  for (const auto& [hostname, host_indices] : indices_of_hostname) {
    if (host_indices.size() > 1 && !hostname.empty()) {
      warning(findings, "hostname " + hostname + " has several host indices: " +
                            format_index_list({host_indices.begin(), host_indices.end()}));
    }
  }
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] != static_cast<int>(k)) {
      warning(findings, "host indices " + format_index_list(indices) + " are not 0-" + std::to_string(indices.size() - 1));
      break;
    }
  }
}

}  // namespace

bool JobCheck::has_errors() const noexcept {
  return std::any_of(findings.begin(), findings.end(), [](const JobFinding& f) { return f.error; });
}

std::string JobCheck::errors_text() const {
  std::vector<std::string> errors;
  for (const auto& finding : findings) {
    if (finding.error) errors.push_back(finding.text);
  }
  return fmt::format("{}", fmt::join(errors, "; "));
}

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

JobCheck check_job(const std::vector<InstanceView>& views) {
  JobCheck job;
  if (views.empty()) {
    error(job.findings, "no instance reported a view");
    return job;
  }
  Findings warnings;
  check_identities(views, job.findings);
  check_same_everywhere(views, [](const Topology& t) { return t.num_total_replicas; }, "the total number of replicas",
                        "POPDIST_NUM_TOTAL_REPLICAS", job.findings);
  check_same_everywhere(views, [](const Topology& t) { return t.ipus_per_replica; },
                        "the number of devices per replica", "POPDIST_NUM_IPUS_PER_REPLICA", job.findings);
  check_replica_tiling(views, job.findings);
  note_disagreement<std::string>(
      views, "launcher", [](const Topology& t) { return std::string(launcher_name(t.launcher)); },
      [](const std::string& s) { return s; }, warnings);
  note_disagreement<bool>(
      views, "uniform_replicas_per_instance", [](const Topology& t) { return t.uniform_replicas_per_instance; },
      [](const bool& b) { return std::string(b ? "true" : "false"); }, warnings);
  job.hosts = group_by_host(views);
  check_hosts(job.hosts, views, warnings);
  job.findings.insert(job.findings.end(), warnings.begin(), warnings.end());
  return job;
}

}  // namespace popdist
