// The host-aware synchronize() over all instances is a barrier: in every round, nobody leaves
// before the last one has arrived (CLOCK_MONOTONIC is one clock for every process of a host),
// including when instances outnumber cores (run at 8 ranks on 2) and when arrivals are staggered
// (one instance late per round, in turn). And a fork() child of an instance, which inherits the
// shared mapping but is no member of the job, gets an error instead of joining the barrier.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include "fault_main_support.hpp"

using namespace popdist_test;

namespace {
double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

int main() {
  popdist::init();
  Verdict verdict;
  const int n = popdist::num_instances();
  const int me = popdist::instance_index();
  constexpr int kRounds = 60;
  std::vector<double> times(2 * kRounds);  // arrival, departure per round
  for (int round = 0; round < kRounds; ++round) {
    if (round % n == me) std::this_thread::sleep_for(std::chrono::microseconds(300));
    times[2 * round] = now();
    popdist::synchronize();
    times[2 * round + 1] = now();
  }
  std::vector<double> all(times.size() * static_cast<std::size_t>(n));
  MPI_Allgather(times.data(), static_cast<int>(times.size()), MPI_DOUBLE, all.data(), static_cast<int>(times.size()),
                MPI_DOUBLE, MPI_COMM_WORLD);
  int bad_rounds = 0;
  for (int round = 0; round < kRounds; ++round) {
    double last_arrival = 0;
    double first_departure = 1e300;
    for (int rank = 0; rank < n; ++rank) {
      const auto* t = &all[static_cast<std::size_t>(rank) * times.size()];
      last_arrival = std::max(last_arrival, t[2 * round]);
      first_departure = std::min(first_departure, t[2 * round + 1]);
    }
    if (first_departure < last_arrival) ++bad_rounds;
  }
  verdict.check(bad_rounds == 0, std::to_string(bad_rounds) + " rounds let an instance leave before the last arrived");

  // A fork() child is not a member of the job.
  const pid_t child = fork();
  if (child == 0) {
    int status = 3;
    try {
      popdist::synchronize();
      status = 1;  // it must not return normally
    } catch (const popdist::UsageError& error) {
      status = contains(error.what(), "fork() child") ? 0 : 2;
    }
    _exit(status);
  }
  int status = -1;
  waitpid(child, &status, 0);
  verdict.check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "a fork() child's synchronize() is a UsageError naming fork (status " + std::to_string(status) + ")");
  popdist::synchronize();  // the parent still is a member
  return verdict.finish("host barrier");
}
