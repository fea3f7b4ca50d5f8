// First-time register_communicator vs MPI_Comm_create_group over the same set.
//
// A set can be registered for the first time only once per process, so each process offers
// few samples (see fresh_sets); run.sh runs this several times and report.py pools the samples.
// Contenders alternate per set (popdist first on even sets, raw first on odd ones); the raw
// creation is done three times per set, since MPI caches nothing.
// Rank 0 prints one JSON line per sample.

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "interleaved.hpp"
#include "popdist/popdist.hpp"

namespace {

using popdist_bench::Clock;
using popdist_bench::json_string;
using popdist_bench::now_seconds;

/// Every subset of two or more instances except "all" (init() creates that one). At 2 ranks
/// that leaves nothing, so there the fresh sets are the two 1-member sets.
std::vector<popdist::InstanceSet> fresh_sets(int n) {
  std::vector<popdist::InstanceSet> sets;
  const std::size_t smallest = n == 2 ? 1 : 2;
  for (unsigned mask = 1; mask + 1 < (1u << n); ++mask) {  // every subset but the empty one and all
    popdist::InstanceSet set;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) set.insert(i);
    if (set.size() >= smallest) sets.push_back(set);
  }
  return sets;
}

/// Wall time of `op`, the slowest rank's (non-members contribute ~0).
template <class Op>
double slowest(Op&& op) {
  MPI_Barrier(MPI_COMM_WORLD);  // align the start; outside the timing
  const double start = now_seconds(Clock::Wall);
  op();
  double elapsed = now_seconds(Clock::Wall) - start;
  MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return elapsed;
}

void create_group_raw(MPI_Comm parent, const popdist::InstanceSet& set, int rank) {
  if (set.count(rank) == 0) return;  // like popdist: only members take part
  MPI_Group parent_group = MPI_GROUP_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm_group(parent, &parent_group);
  std::vector<int> members(set.begin(), set.end());
  MPI_Group_incl(parent_group, static_cast<int>(members.size()), members.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_create_group(parent, group, /*tag=*/7, &comm);
  MPI_Comm_free(&comm);
  MPI_Group_free(&group);
  MPI_Group_free(&parent_group);
}

void print_sample(int ranks, const char* key, const char* label, const popdist::InstanceSet& set, double seconds) {
  std::string members;
  for (int i : set) members += (members.empty() ? "" : ",") + std::to_string(i);
  std::printf(
      "{\"suite\": \"cpp\", \"group\": \"register_first\", \"ranks\": %d, \"key\": \"%s\", \"label\": %s, "
      "\"sample_us\": %.3f, \"set\": \"{%s}\", \"clock\": \"wall\"}\n",
      ranks, key, json_string(label).c_str(), seconds * 1e6, members.c_str());
}

}  // namespace

int main() {
  try {
    popdist::init();
    const int ranks = popdist::num_instances();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    // Warm MPI's communicator-creation path once, untimed, for both contenders alike.
    for (int i = 0; i < 3; ++i) create_group_raw(parent, popdist::InstanceSet{0, ranks - 1}, rank);

    const auto sets = fresh_sets(ranks);
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const auto& set = sets[i];
      double popdist_s = 0;
      std::vector<double> raw_s;
      auto run_popdist = [&] { popdist_s = slowest([&] { popdist::register_communicator(set); }); };
      auto run_raw = [&] {
        for (int k = 0; k < 3; ++k) raw_s.push_back(slowest([&] { create_group_raw(parent, set, rank); }));
      };
      if (i % 2 == 0) {
        run_popdist();
        run_raw();
      } else {
        run_raw();
        run_popdist();
      }
      if (rank == 0) {
        const std::string sets_kind = ranks == 2 ? "(new 1-member set)" : "(new set of 2..n-1)";
        print_sample(ranks, "popdist", ("register_communicator" + sets_kind).c_str(), set, popdist_s);
        for (double s : raw_s)
          print_sample(ranks, "mpi_comm_create_group", ("MPI_Comm_create_group" + sets_kind).c_str(), set, s);
      }
    }
    std::fflush(stdout);
    MPI_Comm_free(&parent);
    popdist::finalize();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_first_registration: %s\n", error.what());
    popdist::abort_job(1);
  }
  return 0;
}
