#pragma once
/// @file interleaved.hpp
/// The benchmark harness: runs several contenders that do the same job (popdist and its raw-MPI
/// baseline) in alternating short blocks of K iterations (A, B, C, A, B, C, ...; the first one
/// rotates each round), so that whatever else the machine is doing hits every contender alike,
/// and reports the median time per iteration of each.
///
/// Why short blocks (~50 µs) and many of them (~1000): on a busy 2-core machine a preemption
/// costs milliseconds; it spoils the few blocks it lands in and the median ignores them. Long
/// blocks would all be spoiled a little. Between blocks nothing synchronizes: the contenders'
/// own collectives keep the ranks in step, and the per-block times are combined only at the end
/// (elementwise MAX over ranks: a block takes as long as its slowest rank).
///
/// Every rank of `comm` runs the same contender with the same K at the same time: a collective
/// must be entered the same number of times everywhere (K is computed from MAX-reduced times).

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace popdist_bench {

/// Wall time for collectives (waiting for the others is the cost); CPU time of the calling
/// thread for local operations, so that on an oversubscribed machine (4 ranks on 2 cores) the
/// figure is the work done, not the time spent preempted.
enum class Clock { Wall, ThreadCpu };

struct Contender {
  std::string key;    ///< stable name report.py looks up, e.g. "popdist"
  std::string label;  ///< what the table shows, e.g. "popdist::synchronize()"
  std::function<void()> op;
};

struct Options {
  Clock clock = Clock::Wall;
  double block_seconds = 50e-6;  ///< each block lasts about this long (far shorter than a time slice)
  int rounds = 1001;             ///< blocks per contender (odd: the median is a sample)
  int warmup_iterations = 200;   ///< per contender, before calibration
  long max_iterations = 200000;  ///< per block
};

struct Figure {
  std::string key;
  std::string label;
  double median_s = 0;
  double p25_s = 0;
  double p75_s = 0;
  int blocks = 0;
  long iterations_per_block = 0;
};

inline double now_seconds(Clock clock) {
  timespec ts{};
  clock_gettime(clock == Clock::Wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const auto above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] * (1 - fraction) + values[above] * fraction;
}

/// Times `iterations` calls of `op` on every rank of `comm`; returns the slowest rank's time.
inline double timed_block(MPI_Comm comm, Clock clock, const std::function<void()>& op, long iterations) {
  MPI_Barrier(comm);  // align the start; outside the timing
  const double start = now_seconds(clock);
  for (long i = 0; i < iterations; ++i) op();
  double elapsed = now_seconds(clock) - start;
  MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm);
  return elapsed;
}

/// Runs the contenders interleaved over `comm` (every rank of it calls this) and returns one
/// figure per contender, in the order given.
inline std::vector<Figure> run_interleaved(MPI_Comm comm, const std::vector<Contender>& contenders,
                                           const Options& options = {}) {
  for (const auto& c : contenders)
    for (int i = 0; i < options.warmup_iterations; ++i) c.op();

  // Calibrate each contender on its own: double the iteration count until a run takes a
  // millisecond, then choose K so that its blocks last about block_seconds. Per-contender K keeps
  // blocks of equal duration when the contenders differ widely (a gloo barrier vs an MPI one).
  // The elapsed times are MAX-reduced, so every rank computes the same K.
  // Reading the thread CPU clock is a system call (~0.5 µs, the wall clock's is not): longer
  // blocks keep it under 1% of a block.
  const double block_seconds =
      options.clock == Clock::ThreadCpu ? std::max(options.block_seconds, 200e-6) : options.block_seconds;
  std::vector<long> iterations(contenders.size(), 1);
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    long n = 1;
    double elapsed = 0;
    while ((elapsed = timed_block(comm, options.clock, contenders[i].op, n)) < 1e-3 && n < options.max_iterations)
      n *= 2;
    // A busy machine preempts some blocks: the fastest of a few is the estimate of the work.
    for (int repeat = 0; repeat < 4; ++repeat)
      elapsed = std::min(elapsed, timed_block(comm, options.clock, contenders[i].op, n));
    const double per_iteration = std::max(elapsed / static_cast<double>(n), 1e-9);
    iterations[i] = std::clamp(static_cast<long>(block_seconds / per_iteration), 1L, options.max_iterations);
  }
  MPI_Bcast(iterations.data(), static_cast<int>(iterations.size()), MPI_LONG, 0, comm);  // belt and braces

  std::vector<std::vector<double>> samples(contenders.size(), std::vector<double>(options.rounds));
  MPI_Barrier(comm);
  for (int round = 0; round < options.rounds; ++round) {
    // Rotate which contender goes first, so that none always follows the same one.
    for (std::size_t j = 0; j < contenders.size(); ++j) {
      const std::size_t index = (j + static_cast<std::size_t>(round)) % contenders.size();
      const auto& op = contenders[index].op;
      const long k = iterations[index];
      const double start = now_seconds(options.clock);
      for (long i = 0; i < k; ++i) op();
      samples[index][static_cast<std::size_t>(round)] = (now_seconds(options.clock) - start) / static_cast<double>(k);
    }
  }
  for (auto& per_block : samples)
    MPI_Allreduce(MPI_IN_PLACE, per_block.data(), options.rounds, MPI_DOUBLE, MPI_MAX, comm);

  std::vector<Figure> figures;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    figures.push_back(Figure{contenders[i].key, contenders[i].label, quantile(samples[i], 0.5),
                             quantile(samples[i], 0.25), quantile(samples[i], 0.75), options.rounds,
                             iterations[i]});
  }
  return figures;
}

/// Escapes a string for a JSON value (labels contain quotes and braces).
inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

/// Prints one JSON line per figure on rank 0 of MPI_COMM_WORLD (the run script collects them).
inline void emit(const std::string& group, int ranks, Clock clock, const std::vector<Figure>& figures,
                 const std::string& note = "") {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (world_rank != 0) return;
  for (const auto& f : figures) {
    std::printf(
        "{\"suite\": \"cpp\", \"group\": %s, \"ranks\": %d, \"key\": %s, \"label\": %s, "
        "\"median_us\": %.4f, \"p25_us\": %.4f, \"p75_us\": %.4f, \"blocks\": %d, \"iterations\": %ld, "
        "\"clock\": \"%s\", \"note\": %s}\n",
        json_string(group).c_str(), ranks, json_string(f.key).c_str(), json_string(f.label).c_str(),
        f.median_s * 1e6, f.p25_s * 1e6, f.p75_s * 1e6, f.blocks, f.iterations_per_block,
        clock == Clock::Wall ? "wall" : "thread-cpu", json_string(note).c_str());
  }
  std::fflush(stdout);
}

}  // namespace popdist_bench
