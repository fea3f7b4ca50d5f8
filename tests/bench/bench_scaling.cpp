// The scaling section (tests/bench/README.md, "Scaling"): at N instances, the cost and the MPI
// traffic per process of popdist::init(), a first register_communicator over all instances, and
// synchronize() untimed and timed, each next to its MPI baseline (MPI_Init_thread,
// MPI_Comm_create_group, MPI_Barrier). Traffic comes from the PMPI counting layer
// (pmpi_counts.cpp) linked into this program. Rank 0 prints one JSON line:
//   {"n": N, "mode": "popdist"|"raw", "<what>_us": slowest rank's time, "<what>_sends": ..., ...}
// `--raw` times a bare MPI_Init_thread only (a process can initialize MPI once).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "pmpi_counts.hpp"
#include "popdist/popdist.hpp"

namespace {

using popdist_bench::MpiCounts;

double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double slowest(double seconds) {
  double max = 0;
  PMPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max * 1e6;
}

std::string counts_json(const char* what, const MpiCounts& c, double per) {
  char text[256];
  std::snprintf(text, sizeof text, ", \"%s_sends\": %.1f, \"%s_sent_bytes\": %.1f, \"%s_collectives\": %.1f, "
                "\"%s_received_bytes\": %.1f",
                what, static_cast<double>(c.sends) / per, what, static_cast<double>(c.sent_bytes) / per, what,
                static_cast<double>(c.collectives) / per, what, static_cast<double>(c.received_bytes) / per);
  return text;
}

/// Median over `blocks` blocks of `iterations` calls of `op`, the slowest rank's per-call time.
template <class Op>
double per_call_us(Op&& op, int blocks, int iterations) {
  std::vector<double> samples;
  for (int b = 0; b < blocks; ++b) {
    const double start = now();
    for (int i = 0; i < iterations; ++i) op();
    samples.push_back((now() - start) / iterations);
  }
  std::vector<double> slowest_samples(samples.size());
  PMPI_Allreduce(samples.data(), slowest_samples.data(), static_cast<int>(samples.size()), MPI_DOUBLE, MPI_MAX,
                 MPI_COMM_WORLD);
  std::sort(slowest_samples.begin(), slowest_samples.end());
  return slowest_samples[slowest_samples.size() / 2] * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const bool raw = argc > 1 && std::strcmp(argv[1], "--raw") == 0;
  const int blocks = 21;
  const int iterations = 20;
  if (raw) {
    const double start = now();
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    const double init = slowest(now() - start);
    int rank = 0, n = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    // The first MPI_Comm_create_group of a process, the baseline of popdist's first registration
    // (a later one, as measured in the popdist run, finds MPI's structures warm).
    MPI_Group world_group;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Barrier(MPI_COMM_WORLD);
    const double created_at = now();
    MPI_Comm created = MPI_COMM_NULL;
    MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 7, &created);
    const double first_create_group = slowest(now() - created_at);
    PMPI_Comm_free(&created);
    PMPI_Group_free(&world_group);
    if (rank == 0) {
      std::printf("{\"n\": %d, \"mode\": \"raw\", \"init_us\": %.1f, \"first_create_group_us\": %.1f}\n", n, init,
                  first_create_group);
    }
    MPI_Finalize();
    return 0;
  }
  const double start = now();
  popdist::init();
  const double init_local = now() - start;
  const auto after_init = popdist_bench::mpi_counts();
  const double init = slowest(init_local);
  const int n = popdist::num_instances();
  popdist::InstanceSet everyone;
  for (int i = 0; i < n; ++i) everyone.insert(i);
  std::string json = "{\"n\": " + std::to_string(n) + ", \"mode\": \"popdist\"";
  char figure[64];
  std::snprintf(figure, sizeof figure, ", \"init_us\": %.1f", init);
  json += figure + counts_json("init", after_init, 1);

  // First registration of all instances vs MPI_Comm_create_group over the same group.
  PMPI_Barrier(MPI_COMM_WORLD);
  auto before = popdist_bench::mpi_counts();
  double t = now();
  popdist::register_communicator(everyone, "scaling/all");
  const double registration = slowest(now() - t);
  json += counts_json("register", popdist_bench::mpi_counts() - before, 1);
  MPI_Group world_group;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  PMPI_Barrier(MPI_COMM_WORLD);
  before = popdist_bench::mpi_counts();
  t = now();
  MPI_Comm created = MPI_COMM_NULL;
  MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 7, &created);
  const double create_group = slowest(now() - t);
  json += counts_json("create_group", popdist_bench::mpi_counts() - before, 1);
  std::snprintf(figure, sizeof figure, ", \"register_us\": %.1f", registration);
  json += figure;
  std::snprintf(figure, sizeof figure, ", \"create_group_us\": %.1f", create_group);
  json += figure;
  PMPI_Comm_free(&created);
  PMPI_Group_free(&world_group);

  // synchronize(): untimed (host-aware), timed, and MPI_Barrier, each a median of blocks.
  MPI_Comm dup = MPI_COMM_NULL;
  PMPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const auto calls = static_cast<double>(blocks * iterations);
  popdist::synchronize();  // the host barrier's one-time creation, outside the figures
  before = popdist_bench::mpi_counts();
  const double sync = per_call_us([] { popdist::synchronize(); }, blocks, iterations);
  json += counts_json("sync", popdist_bench::mpi_counts() - before, calls);
  before = popdist_bench::mpi_counts();
  const double timed = per_call_us([] { popdist::synchronize("", {}, popdist::Seconds(60)); }, blocks, iterations);
  json += counts_json("timed_sync", popdist_bench::mpi_counts() - before, calls);
  before = popdist_bench::mpi_counts();
  const double barrier = per_call_us([dup] { MPI_Barrier(dup); }, blocks, iterations);
  json += counts_json("barrier", popdist_bench::mpi_counts() - before, calls);
  std::snprintf(figure, sizeof figure, ", \"sync_us\": %.2f", sync);
  json += figure;
  std::snprintf(figure, sizeof figure, ", \"timed_sync_us\": %.2f", timed);
  json += figure;
  std::snprintf(figure, sizeof figure, ", \"barrier_us\": %.2f}", barrier);
  json += figure;
  PMPI_Comm_free(&dup);
  if (popdist::instance_index() == 0) std::printf("%s\n", json.c_str());
  popdist::finalize();
  return 0;
}
