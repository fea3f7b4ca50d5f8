// popdist's runtime side by side with the raw MPI that does the same job, in one process:
// synchronize (world, a registered subset), synchronize with a timeout, cached registration,
// execute_on_instances, and detection from the real environment. Run under mpirun at any
// number of ranks; rank 0 prints one JSON line per figure (see interleaved.hpp).

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "interleaved.hpp"
#include "popdist/popdist.hpp"

namespace {

using popdist_bench::Clock;
using popdist_bench::Contender;
using popdist_bench::emit;
using popdist_bench::Options;
using popdist_bench::run_interleaved;

// The subset: instances {0, 1}. At 2 ranks that is every instance, addressed by id all the same.
const popdist::InstanceSet kPair{0, 1};
const std::string kPairId = "bench-pair";

popdist::InstanceSet all_instances(int n) {
  popdist::InstanceSet all;
  for (int i = 0; i < n; ++i) all.insert(i);
  return all;
}

void bench_synchronize_world(int ranks, const Options& options) {
  MPI_Comm native = popdist::native_communicator();
  // A plain duplicate of world: what a user without popdist would barrier on.
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  auto figures = run_interleaved(
      MPI_COMM_WORLD,
      {Contender{"popdist", "popdist::synchronize()", [] { popdist::synchronize(); }},
       Contender{"mpi_barrier_native", "MPI_Barrier(native_communicator())", [native] { MPI_Barrier(native); }},
       Contender{"mpi_barrier_dup", "MPI_Barrier(MPI_Comm_dup(world))", [dup] { MPI_Barrier(dup); }}},
      options);
  emit("sync_world", ranks, options.clock, figures);
  MPI_Comm_free(&dup);
}

void bench_synchronize_subset(int ranks, const Options& options) {
  popdist::register_communicator(kPair, kPairId);
  MPI_Comm native = popdist::native_communicator(kPairId);
  if (native != MPI_COMM_NULL) {  // non-members have nothing to measure
    auto figures = run_interleaved(
        native,
        {Contender{"popdist_id", "popdist::synchronize(\"bench-pair\")", [] { popdist::synchronize(kPairId); }},
         Contender{"popdist_set", "popdist::synchronize(\"\", {0,1})", [] { popdist::synchronize("", kPair); }},
         Contender{"mpi_barrier_native", "MPI_Barrier(native_communicator(\"bench-pair\"))",
                   [native] { MPI_Barrier(native); }}},
        options);
    emit("sync_subset", ranks, options.clock, figures, ranks == 2 ? "the pair is every instance" : "");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void bench_synchronize_timeout(int ranks, const Options& options) {
  const popdist::Seconds timeout{60.0};
  auto figures = run_interleaved(
      MPI_COMM_WORLD,
      {Contender{"with_timeout", "popdist::synchronize(timeout=60s)",
                 [timeout] { popdist::synchronize("", {}, timeout); }},
       Contender{"without_timeout", "popdist::synchronize()", [] { popdist::synchronize(); }}},
      options);
  emit("sync_timeout", ranks, options.clock, figures);
}

void bench_cached_registration(int ranks, Options options) {
  // Local work only (a lookup): CPU time, so that preemption on an oversubscribed machine does
  // not count.
  options.clock = Clock::ThreadCpu;
  const popdist::InstanceSet all = all_instances(ranks);
  popdist::register_communicator(all);
  auto figures = run_interleaved(
      MPI_COMM_WORLD,
      {Contender{"by_set", "register_communicator({0,1}) again", [] { popdist::register_communicator(kPair); }},
       Contender{"by_id", "register_communicator({0,1}, \"bench-pair\") again",
                 [] { popdist::register_communicator(kPair, kPairId); }},
       Contender{"all", "register_communicator(all instances) again",
                 [&all] { popdist::register_communicator(all); }}},
      options);
  emit("register_cached", ranks, options.clock, figures);
}

void bench_execute_on_instances(int ranks, const Options& options) {
  const popdist::InstanceSet all = all_instances(ranks);
  MPI_Comm native = popdist::native_communicator("", all);
  // The raw shapes: popdist's own (the call, then one allreduce of a failure flag so that every
  // member learns whether any failed; no entry barrier), and the barrier-call-barrier.
  auto body = [] {};
  auto figures = run_interleaved(
      MPI_COMM_WORLD,
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
      options);
  emit("execute", ranks, options.clock, figures);
}

void bench_detect(int ranks, Options options) {
  options.clock = Clock::ThreadCpu;
  auto figures = run_interleaved(
      MPI_COMM_WORLD,
      {Contender{"detect", "detect(process_environment())",
                 [] {
                   volatile int index = popdist::detect(popdist::process_environment()).instance_index;
                   (void)index;
                 }},
       Contender{"getter", "instance_index() (cached topology)", [] {
                   volatile int index = popdist::instance_index();
                   (void)index;
                 }}},
      options);
  emit("detect", ranks, options.clock, figures);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"popdist runtime benchmarks: popdist vs raw MPI, interleaved (run under mpirun)"};
  Options options;
  app.add_option("--rounds", options.rounds, "blocks per contender")->check(CLI::PositiveNumber);
  app.add_option("--block-seconds", options.block_seconds, "duration of one block")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  try {
    popdist::init();
    const int ranks = popdist::num_instances();
    bench_synchronize_world(ranks, options);
    bench_synchronize_subset(ranks, options);
    bench_synchronize_timeout(ranks, options);
    bench_cached_registration(ranks, options);
    bench_execute_on_instances(ranks, options);
    bench_detect(ranks, options);
    popdist::finalize();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_runtime: %s\n", error.what());
    popdist::abort_job(1);
  }
  return 0;
}
