// popdist's runtime side by side with the raw MPI that does the same job, in one process:
// synchronize (world, a registered subset), synchronize with a timeout, cached registration,
// execute_on_instances, and detection from the real environment. Run under mpirun at any
// number of ranks; rank 0 prints one JSON line per figure (see interleaved.hpp).
//
// --profile GROUP/KEY runs only that contender, a fixed number of times, with callgrind's
// collection switched on around the loop alone (instruction counts are stable on a noisy
// machine, unlike times):
//   mpirun -np 2 valgrind --tool=callgrind --collect-atstart=no popdist_bench_runtime
//       --profile sync_timeout/with_timeout --iterations 2000

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>  // macros only: no-ops unless the program runs under callgrind
#else
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include "interleaved.hpp"
#include "popdist/popdist.hpp"
#include "raw_timed_barriers.hpp"

namespace {

using popdist_bench::Clock;
using popdist_bench::Contender;

// The subset: instances {0, 1}. At 2 ranks that is every instance, addressed by id all the same.
const popdist::InstanceSet kPair{0, 1};
const std::string kPairId = "bench-pair";

/// Contenders that do the same job, run interleaved over `comm` (MPI_COMM_NULL: this rank is
/// not a member and sits the comparison out).
struct Comparison {
  std::string group;
  MPI_Comm comm;
  Clock clock;
  std::vector<Contender> contenders;
  std::string note;
};

popdist::InstanceSet all_instances(int n) {
  popdist::InstanceSet all;
  for (int i = 0; i < n; ++i) all.insert(i);
  return all;
}

Comparison synchronize_world(MPI_Comm dup_of_world) {
  MPI_Comm native = popdist::native_communicator();
  return {"sync_world",
          MPI_COMM_WORLD,
          Clock::Wall,
          {Contender{"popdist", "popdist::synchronize()", [] { popdist::synchronize(); }},
           Contender{"mpi_barrier_native", "MPI_Barrier(native_communicator())", [native] { MPI_Barrier(native); }},
           // A plain duplicate of world: what a user without popdist would barrier on.
           Contender{"mpi_barrier_dup", "MPI_Barrier(MPI_Comm_dup(world))",
                     [dup_of_world] { MPI_Barrier(dup_of_world); }}},
          ""};
}

Comparison synchronize_subset(int ranks) {
  popdist::register_communicator(kPair, kPairId);
  MPI_Comm native = popdist::native_communicator(kPairId);  // MPI_COMM_NULL on non-members
  return {"sync_subset",
          native,
          Clock::Wall,
          {Contender{"popdist_id", "popdist::synchronize(\"bench-pair\")", [] { popdist::synchronize(kPairId); }},
           Contender{"popdist_set", "popdist::synchronize(\"\", {0,1})", [] { popdist::synchronize("", kPair); }},
           Contender{"mpi_barrier_native", "MPI_Barrier(native_communicator(\"bench-pair\"))",
                     [native] { MPI_Barrier(native); }}},
          ranks == 2 ? "the pair is every instance" : ""};
}

Comparison synchronize_timeout(MPI_Comm raw_comm) {
  const popdist::Seconds timeout{60.0};
  // The raw timed barriers run on a communicator of their own, so that their messages never
  // meet popdist's.
  auto ibarrier = std::make_shared<popdist_bench::IbarrierPoll>(raw_comm, timeout.count());
  auto point_to_point = std::make_shared<popdist_bench::PointToPointPoll>(raw_comm, timeout.count());
  return {"sync_timeout",
          MPI_COMM_WORLD,
          Clock::Wall,
          {Contender{"with_timeout", "popdist::synchronize(timeout=60s)",
                     [timeout] { popdist::synchronize("", {}, timeout); }},
           Contender{"without_timeout", "popdist::synchronize()", [] { popdist::synchronize(); }},
           Contender{"raw_p2p_poll", "raw Isend/Irecv to all + MPI_Testall poll",
                     [point_to_point] { (*point_to_point)(); }},
           Contender{"raw_ibarrier_poll", "raw MPI_Ibarrier + MPI_Test poll", [ibarrier] { (*ibarrier)(); }},
           Contender{"mpi_barrier", "MPI_Barrier", [raw_comm] { MPI_Barrier(raw_comm); }}},
          ""};
}

Comparison cached_registration(const popdist::InstanceSet& all) {
  popdist::register_communicator(all);
  popdist::register_communicator(kPair, kPairId);
  // Local work only (a lookup): CPU time, so that preemption on an oversubscribed machine does
  // not count.
  return {"register_cached",
          MPI_COMM_WORLD,
          Clock::ThreadCpu,
          {Contender{"by_set", "register_communicator({0,1}) again", [] { popdist::register_communicator(kPair); }},
           Contender{"by_id", "register_communicator({0,1}, \"bench-pair\") again",
                     [] { popdist::register_communicator(kPair, kPairId); }},
           Contender{"all", "register_communicator(all instances) again",
                     [&all] { popdist::register_communicator(all); }}},
          ""};
}

Comparison execute_on_instances(const popdist::InstanceSet& all) {
  MPI_Comm native = popdist::native_communicator("", all);
  // The raw shapes: popdist's own (the call, then one allreduce of a failure flag so that every
  // member learns whether any failed; no entry barrier), and the reference shape barrier-call-barrier.
  auto body = [] {};
  return {"execute",
          MPI_COMM_WORLD,
          Clock::Wall,
          {Contender{"popdist", "popdist::execute_on_instances(all, []{})",
                     [&all, body] { popdist::execute_on_instances(all, body); }},
           Contender{"raw_call_allreduce", "call; MPI_Allreduce(failed flag)",
                     [native, body] {
                       int failed = 0;
                       try {
                         body();
                       } catch (...) {
                         failed = 1;
                       }
                       int failed_anywhere = 0;
                       MPI_Allreduce(&failed, &failed_anywhere, 1, MPI_INT, MPI_MAX, native);
                     }},
           Contender{"raw_barrier_call_barrier", "MPI_Barrier; call; MPI_Barrier",
                     [native, body] {
                       MPI_Barrier(native);
                       body();
                       MPI_Barrier(native);
                     }}},
          ""};
}

Comparison detection() {
  return {"detect",
          MPI_COMM_WORLD,
          Clock::ThreadCpu,
          {Contender{"detect", "detect(process_environment())",
                     [] {
                       volatile int index = popdist::detect(popdist::process_environment()).instance_index;
                       (void)index;
                     }},
           Contender{"getter", "instance_index() (cached topology)",
                     [] {
                       volatile int index = popdist::instance_index();
                       (void)index;
                     }}},
          ""};
}

/// Runs one contender `iterations` times with callgrind collecting only around the loop.
void profile(const std::vector<Comparison>& comparisons, const std::string& which, long iterations) {
  for (const auto& comparison : comparisons) {
    for (const auto& contender : comparison.contenders) {
      if (comparison.group + "/" + contender.key != which) continue;
      if (comparison.comm == MPI_COMM_NULL) return;
      for (int i = 0; i < 100; ++i) contender.op();  // warm-up, not collected
      MPI_Barrier(comparison.comm);
      CALLGRIND_TOGGLE_COLLECT;
      for (long i = 0; i < iterations; ++i) contender.op();
      CALLGRIND_TOGGLE_COLLECT;
      return;
    }
  }
  throw popdist::UsageError("--profile: no contender '" + which + "' (GROUP/KEY as in the JSON output)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"popdist runtime benchmarks: popdist vs raw MPI, interleaved (run under mpirun)"};
  popdist_bench::Options options;
  std::string profiled;
  long iterations = 1000;
  app.add_option("--rounds", options.rounds, "blocks per contender")->check(CLI::PositiveNumber);
  app.add_option("--block-seconds", options.block_seconds, "duration of one block")->check(CLI::PositiveNumber);
  app.add_option("--profile", profiled, "run only GROUP/KEY, for callgrind (collection toggled around the loop)");
  app.add_option("--iterations", iterations, "iterations for --profile")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  try {
    popdist::init();
    const int ranks = popdist::num_instances();
    const auto all = all_instances(ranks);
    MPI_Comm dup_of_world = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup_of_world);
    const std::vector<Comparison> comparisons{synchronize_world(dup_of_world), synchronize_subset(ranks),
                                              synchronize_timeout(dup_of_world), cached_registration(all),
                                              execute_on_instances(all), detection()};
    if (!profiled.empty()) {
      profile(comparisons, profiled, iterations);
    } else {
      for (const auto& comparison : comparisons) {
        if (comparison.comm != MPI_COMM_NULL) {
          auto run_options = options;
          run_options.clock = comparison.clock;
          const auto figures = popdist_bench::run_interleaved(comparison.comm, comparison.contenders, run_options);
          popdist_bench::emit(comparison.group, ranks, comparison.clock, figures, comparison.note);
        }
        MPI_Barrier(MPI_COMM_WORLD);  // non-members wait here for the members' comparison
      }
    }
    MPI_Comm_free(&dup_of_world);
    popdist::finalize();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_runtime: %s\n", error.what());
    popdist::abort_job(1);
  }
  return 0;
}
