// Property tests: simulate EVERY instance of large jobs (up to 65,536 instances and 1,048,576
// replicas), building the environment each instance would see from its launcher and PopRun,
// and check the job that detect() reconstructs: instance indices a permutation of
// 0..instances-1, replica ranges [offset, offset + local) tiling 0..total-1 exactly, local
// indices a permutation on every host, and (uniform jobs) distinct device ids.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "popdist/grouping.hpp"
#include "popdist/topology.hpp"

namespace popdist::testing {
namespace {

/// A job to simulate: who launches it, how many instances, how they sit on hosts, and how
/// many replicas each instance drives.
struct Job {
  std::string name;
  Launcher launcher = Launcher::OpenMpi;  ///< PopDist: PopRun's variables and no launcher
  int instances = 1;
  int per_host = 1;  ///< processes per host, block distribution (the last host may have fewer)
  std::vector<int> locals;  ///< replicas per instance; one entry = the same for all (uniform)
  int ipus = 1;
  /// Set POPDIST_* as `popdist run` does, POPDIST_UNIFORM_REPLICAS_PER_INSTANCE included (a
  /// non-uniform instance whose local x instances happens to equal the total needs it); else
  /// only the local replica count, and the rest derives from the launcher.
  bool poprun_variables = true;

  [[nodiscard]] bool uniform() const { return locals.size() == 1; }
  [[nodiscard]] int local_of(int instance) const {
    return uniform() ? locals[0] : locals[static_cast<std::size_t>(instance)];
  }
};

/// The environment of one instance as a flat list; looked up linearly (a dozen entries).
using Vars = std::vector<std::pair<std::string, std::string>>;

EnvLookup lookup_over(const Vars& vars) {
  return [&vars](const std::string& name) -> std::optional<std::string> {
    for (const auto& [key, value] : vars) {
      if (key == name) return value;
    }
    return std::nullopt;
  };
}

std::string tasks_per_node(int instances, int per_host) {
  const int full_hosts = instances / per_host;
  const int rest = instances % per_host;
  std::string text;
  if (full_hosts > 0) text = full_hosts == 1 ? std::to_string(per_host)
                                             : std::to_string(per_host) + "(x" + std::to_string(full_hosts) + ")";
  if (rest > 0) text += (text.empty() ? "" : ",") + std::to_string(rest);
  return text;
}

/// Sets the launcher's variables for instance `rank` of `job`.
void add_launcher(Vars& vars, const Job& job, int rank, const std::string& tasks) {
  const int n = job.instances;
  const int host = rank / job.per_host;
  const int local_rank = rank % job.per_host;
  const int local_size = std::min(job.per_host, n - host * job.per_host);
  const int hosts = (n + job.per_host - 1) / job.per_host;
  const auto s = [](int value) { return std::to_string(value); };
  switch (job.launcher) {
    case Launcher::OpenMpi:
      vars.insert(vars.end(), {{"OMPI_COMM_WORLD_RANK", s(rank)}, {"OMPI_COMM_WORLD_SIZE", s(n)},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", s(local_rank)},
                               {"OMPI_COMM_WORLD_LOCAL_SIZE", s(local_size)}, {"PMIX_RANK", s(rank)}});
      break;
    case Launcher::Mpich:
      vars.insert(vars.end(), {{"PMI_RANK", s(rank)}, {"PMI_SIZE", s(n)}, {"MPI_LOCALRANKID", s(local_rank)},
                               {"MPI_LOCALNRANKS", s(local_size)}});
      break;
    case Launcher::Pals:
      vars.insert(vars.end(), {{"PMI_RANK", s(rank)}, {"PMI_SIZE", s(n)}, {"PMI_LOCAL_RANK", s(local_rank)},
                               {"PMI_LOCAL_SIZE", s(local_size)}, {"PALS_RANKID", s(rank)},
                               {"PALS_NODEID", s(host)}});
      break;
    case Launcher::Mvapich2:
      vars.insert(vars.end(), {{"MV2_COMM_WORLD_RANK", s(rank)}, {"MV2_COMM_WORLD_SIZE", s(n)},
                               {"MV2_COMM_WORLD_LOCAL_RANK", s(local_rank)},
                               {"MV2_COMM_WORLD_LOCAL_SIZE", s(local_size)}});
      break;
    case Launcher::Torchrun:
      vars.insert(vars.end(), {{"TORCHELASTIC_RUN_ID", "sim"}, {"RANK", s(rank)}, {"WORLD_SIZE", s(n)},
                               {"LOCAL_RANK", s(local_rank)}, {"LOCAL_WORLD_SIZE", s(local_size)},
                               {"GROUP_RANK", s(host)}, {"GROUP_WORLD_SIZE", s(hosts)}});
      break;
    case Launcher::Horovod: {
      // Cross rank: the rank among the processes with this local rank (hosts are filled in order,
      // so it is the host index); cross size: the hosts that have a process with this local rank.
      const int full_hosts = n / job.per_host;
      const int rest = n % job.per_host;
      const int cross_size = full_hosts + (local_rank < rest ? 1 : 0);
      vars.insert(vars.end(), {{"HOROVOD_RANK", s(rank)}, {"HOROVOD_SIZE", s(n)}, {"HOROVOD_LOCAL_RANK", s(local_rank)},
                               {"HOROVOD_LOCAL_SIZE", s(local_size)}, {"HOROVOD_CROSS_RANK", s(host)},
                               {"HOROVOD_CROSS_SIZE", s(cross_size)}, {"HOROVOD_CONTROLLER", "gloo"}});
      break;
    }
    case Launcher::Lsf:
      vars.insert(vars.end(), {{"LSB_JOBID", "88"}, {"JSM_NAMESPACE_RANK", s(rank)}, {"JSM_NAMESPACE_SIZE", s(n)},
                               {"JSM_NAMESPACE_LOCAL_RANK", s(local_rank)},
                               {"JSM_NAMESPACE_LOCAL_SIZE", s(local_size)}});
      break;
    case Launcher::PyTorch:
      vars.insert(vars.end(), {{"RANK", s(rank)}, {"WORLD_SIZE", s(n)}, {"LOCAL_RANK", s(local_rank)},
                               {"LOCAL_WORLD_SIZE", s(local_size)}, {"GROUP_RANK", s(host)},
                               {"GROUP_WORLD_SIZE", s(hosts)}, {"MASTER_ADDR", "node0"}});
      break;
    case Launcher::Slurm:
      vars.insert(vars.end(), {{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", s(rank)},
                               {"SLURM_STEP_NUM_TASKS", s(n)}, {"SLURM_LOCALID", s(local_rank)},
                               {"SLURM_NODEID", s(host)}, {"SLURM_STEP_TASKS_PER_NODE", tasks},
                               {"SLURM_STEP_NUM_NODES", s(hosts)}, {"SLURM_NTASKS", "1"}});
      break;
    case Launcher::Singleton:
    case Launcher::PopDist:
    case Launcher::Mpi:  // its identity comes from MPI itself, not variables (test_detect_mpi_family.cpp)
      break;
  }
}

/// Simulates every instance of `job` and checks the job detect() reconstructs.
void simulate(const Job& job) {
  INFO("job: " << job.name);
  const int n = job.instances;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(n), 0);
  for (int i = 1; i < n; ++i) {
    offsets[static_cast<std::size_t>(i)] = offsets[static_cast<std::size_t>(i - 1)] + job.local_of(i - 1);
  }
  const std::int64_t total = offsets.back() + job.local_of(n - 1);
  REQUIRE(total <= 1048576);
  const std::string tasks = tasks_per_node(n, job.per_host);

  std::vector<char> seen_instance(static_cast<std::size_t>(n), 0);
  std::vector<std::pair<int, int>> ranges;  // (offset, count) as detected
  ranges.reserve(static_cast<std::size_t>(n));
  std::map<int, std::vector<int>> locals_by_host;  // host -> local indices detected there
  // Device groups are powers of two: only then are the instances' groups disjoint.
  std::vector<std::int64_t> device_ids;
  const int share = job.uniform() ? job.locals[0] * job.ipus : 0;
  const bool power_of_two_share = share > 0 && (share & (share - 1)) == 0;
  Vars vars;
  for (int rank = 0; rank < n; ++rank) {
    vars.clear();
    add_launcher(vars, job, rank, tasks);
    const auto s = [](std::int64_t value) { return std::to_string(value); };
    if (job.poprun_variables) {
      vars.insert(vars.end(), {{"POPDIST_NUM_TOTAL_REPLICAS", s(total)},
                               {"POPDIST_NUM_LOCAL_REPLICAS", s(job.local_of(rank))},
                               {"POPDIST_REPLICA_INDEX_OFFSET", s(offsets[static_cast<std::size_t>(rank)])},
                               {"POPDIST_NUM_IPUS_PER_REPLICA", s(job.ipus)}});
      vars.emplace_back("POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", job.uniform() ? "1" : "0");
      if (job.launcher != Launcher::PopDist) {
        vars.emplace_back("POPDIST_LOCAL_INSTANCE_INDEX", s(rank % job.per_host));
      }
    } else if (job.local_of(rank) != 1) {
      vars.emplace_back("POPDIST_NUM_LOCAL_REPLICAS", s(job.local_of(rank)));
    }
    const Topology t = detect(lookup_over(vars));
    // REQUIRE only on failure paths: Catch2 assertions per instance would dominate the run time.
    if (t.launcher != job.launcher || t.num_instances != n || t.num_total_replicas != total ||
        t.ipus_per_replica != job.ipus || t.uniform_replicas_per_instance != job.uniform() ||
        t.num_local_replicas != job.local_of(rank) || !t.popdist_env_set) {
      FAIL("instance " << rank << " detected:\n" << describe(t));
    }
    if (t.instance_index < 0 || t.instance_index >= n || seen_instance[static_cast<std::size_t>(t.instance_index)]) {
      FAIL("instance " << rank << " has a duplicate or out-of-range index:\n" << describe(t));
    }
    seen_instance[static_cast<std::size_t>(t.instance_index)] = 1;
    ranges.emplace_back(t.replica_index_offset, t.num_local_replicas);
    const int host = job.launcher == Launcher::PopDist ? 0 : rank / job.per_host;
    if (t.host_index.has_value() && *t.host_index != host) {
      FAIL("instance " << rank << " on the wrong host:\n" << describe(t));
    }
    if (job.launcher != Launcher::PopDist) locals_by_host[host].push_back(t.local_instance_index);
    if (power_of_two_share) device_ids.push_back(device_id(t));
  }
  // Every index seen once, so 0..n-1 is covered: a permutation.
  CHECK(std::all_of(seen_instance.begin(), seen_instance.end(), [](char seen) { return seen != 0; }));
  // The ranges, sorted by offset, must start at 0, follow one another without gap or overlap,
  // and end at total.
  std::sort(ranges.begin(), ranges.end());
  std::int64_t next = 0;
  for (const auto& [offset, count] : ranges) {
    if (offset != next) FAIL("replica ranges do not tile: a range starts at " << offset << ", expected " << next);
    next += count;
  }
  CHECK(next == total);
  for (auto& [host, locals] : locals_by_host) {
    std::sort(locals.begin(), locals.end());
    for (std::size_t i = 0; i < locals.size(); ++i) {
      if (locals[i] != static_cast<int>(i)) FAIL("host " << host << " local indices are not 0..k-1");
    }
  }
  if (power_of_two_share) {
    std::sort(device_ids.begin(), device_ids.end());
    CHECK(std::adjacent_find(device_ids.begin(), device_ids.end()) == device_ids.end());
  }
}

std::vector<int> pattern(int instances, int modulus, std::uint32_t seed) {
  std::vector<int> locals(static_cast<std::size_t>(instances));
  std::uint32_t x = seed;
  for (auto& local : locals) {
    x = x * 1664525u + 1013904223u;  // a fixed LCG: the same "random" job every run
    local = 1 + static_cast<int>((x >> 8) % static_cast<std::uint32_t>(modulus));
  }
  return locals;
}

}  // namespace

TEST_CASE("properties.uniform jobs under every launcher tile their replicas", "[detect][property]") {
  const std::vector<Job> jobs = {
      {"openmpi 1 instance", Launcher::OpenMpi, 1, 1, {1}, 1},
      {"openmpi 3x4 replicas", Launcher::OpenMpi, 3, 2, {4}, 2},
      {"openmpi 65536 instances x 16 replicas = 1048576", Launcher::OpenMpi, 65536, 8, {16}, 1},
      {"mpich 1024 instances x 1024 replicas", Launcher::Mpich, 1024, 4, {1024}, 1},
      {"pals 4096 instances", Launcher::Pals, 4096, 64, {2}, 4},
      {"mvapich2 1000 instances", Launcher::Mvapich2, 1000, 7, {3}, 1},
      {"torchrun 65536 workers 8 per node", Launcher::Torchrun, 65536, 8, {1}, 1},
      {"slurm 65536 tasks 8 per node", Launcher::Slurm, 65536, 8, {2}, 2},
      {"slurm 17 tasks 3 per node and a remainder", Launcher::Slurm, 17, 3, {1}, 1},
      {"horovod 4096 workers 8 per host", Launcher::Horovod, 4096, 8, {1}, 1},
      {"horovod 10 workers 4 per host and a remainder", Launcher::Horovod, 10, 4, {2}, 1},
      {"lsf 8192 tasks 6 per node", Launcher::Lsf, 8192, 6, {2}, 4},
      {"pytorch 65536 workers 8 per node", Launcher::PyTorch, 65536, 8, {1}, 1},
      {"popdist without a launcher 4096 x 256", Launcher::PopDist, 4096, 1, {256}, 1},
      {"popdist without a launcher 65536 x 16", Launcher::PopDist, 65536, 1, {16}, 2},
  };
  for (const auto& job : jobs) simulate(job);
}

TEST_CASE("properties.uniform jobs derived from the launcher alone tile their replicas", "[detect][property]") {
  Job job{"openmpi 65536 instances, local replicas only", Launcher::OpenMpi, 65536, 16, {16}, 1, false};
  simulate(job);
  job = {"slurm 4099 tasks, nothing from PopRun", Launcher::Slurm, 4099, 32, {1}, 1, false};
  simulate(job);
}

TEST_CASE("properties.non-uniform jobs via a launcher tile their replicas", "[detect][property]") {
  const std::vector<Job> jobs = {
      {"openmpi 3 instances 1+2+3", Launcher::OpenMpi, 3, 3, {1, 2, 3}, 1},
      {"openmpi 65536 instances about 1M replicas", Launcher::OpenMpi, 65536, 8, pattern(65536, 30, 1), 1},
      {"mpich 5000 instances", Launcher::Mpich, 5000, 16, pattern(5000, 5, 2), 1},
      {"slurm 65536 tasks", Launcher::Slurm, 65536, 64, pattern(65536, 3, 3), 2},
      {"torchrun 777 workers", Launcher::Torchrun, 777, 7, pattern(777, 9, 4), 1},
      {"pals 2048", Launcher::Pals, 2048, 128, pattern(2048, 2, 5), 1},
      {"mvapich2 999", Launcher::Mvapich2, 999, 10, pattern(999, 4, 6), 1},
      {"horovod 333", Launcher::Horovod, 333, 5, pattern(333, 3, 7), 1},
      {"lsf 500", Launcher::Lsf, 500, 6, pattern(500, 4, 8), 1},
      {"pytorch 1000", Launcher::PyTorch, 1000, 8, pattern(1000, 6, 9), 1},
  };
  for (const auto& job : jobs) {
    // A pattern that happens to be constant would be uniform; the jobs above are not.
    REQUIRE(std::adjacent_find(job.locals.begin(), job.locals.end(), std::not_equal_to<>()) != job.locals.end());
    simulate(job);
  }
}

TEST_CASE("properties.random small jobs under random launchers", "[detect][property]") {
  std::mt19937 random(4242);
  const Launcher launchers[] = {Launcher::OpenMpi, Launcher::Mpich,   Launcher::Pals, Launcher::Mvapich2,
                                Launcher::Torchrun, Launcher::Slurm,  Launcher::PopDist, Launcher::Horovod,
                                Launcher::Lsf,      Launcher::PyTorch};
  for (int trial = 0; trial < 400; ++trial) {
    Job job;
    job.launcher = launchers[random() % std::size(launchers)];
    job.instances = 1 + static_cast<int>(random() % 64);
    job.per_host = 1 + static_cast<int>(random() % 9);
    job.ipus = 1 << (random() % 4);
    const bool uniform = job.launcher == Launcher::PopDist || random() % 2 == 0;
    const int modulus = 1 + static_cast<int>(random() % 6);
    job.locals = uniform ? std::vector<int>{1 + static_cast<int>(random() % 8)}
                         : pattern(job.instances, modulus, static_cast<std::uint32_t>(random()));
    const bool constant =
        std::adjacent_find(job.locals.begin(), job.locals.end(), std::not_equal_to<>()) == job.locals.end();
    if (!job.uniform() && constant) {
      job.locals = {job.locals[0]};  // constant after all: uniform
    }
    job.name = "trial " + std::to_string(trial) + " " + std::string(launcher_name(job.launcher)) + " " +
               std::to_string(job.instances) + " instances";
    simulate(job);
  }
}

TEST_CASE("properties.replica groupings assign every replica to exactly one group", "[grouping][property]") {
  for (int replicas = 1; replicas <= 64; ++replicas) {
    for (int group_size = 1; group_size <= replicas; ++group_size) {
      if (replicas % group_size != 0) continue;
      const int other_stride = replicas / group_size;
      for (const int stride : {1, other_stride}) {
        if (stride != 1 && stride * group_size != replicas) continue;
        const ReplicaGrouping grouping(replicas, group_size, stride);
        std::vector<int> count(static_cast<std::size_t>(replicas), 0);
        for (int group = 0; group < grouping.num_groups(); ++group) {
          for (const int replica : grouping.members(group)) {
            ++count[static_cast<std::size_t>(replica)];
            if (grouping.group_of(replica) != group) FAIL("group_of disagrees with members");
          }
        }
        CHECK(std::all_of(count.begin(), count.end(), [](int c) { return c == 1; }));
        const auto transposed = grouping.transpose();
        // The i-th members of every group form group i of the transpose, and transposing twice
        // gives back the same groups.
        for (int group = 0; group < grouping.num_groups(); ++group) {
          const auto members = grouping.members(group);
          for (int i = 0; i < grouping.group_size(); ++i) {
            if (transposed.group_of(members[static_cast<std::size_t>(i)]) != i) FAIL("transpose is not orthogonal");
          }
        }
        CHECK(transposed.transpose().groups() == grouping.groups());
      }
    }
  }
}

}  // namespace popdist::testing
