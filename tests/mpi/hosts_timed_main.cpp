// A timed synchronize over all instances across hosts (protocols/timed/timed_hosts.cpp), run
// under the testbed's fake hosts: argv[1] lists the instances per host ("2,2", "3,1"), argv[2]
// names the instance that never comes to the last synchronize.
//  1. Timed rounds, alone and between untimed ones (both count in the host's shared counter): every
//     round meets; only the hosts' leaders send messages (ceil(log2 H) per round for H hosts),
//     the other instances none, counted through the PMPI layer.
//  2. The missing instance: every other one raises TimeoutError naming exactly it (the roll
//     call over all instances), within its timeout and the roll call's length; it, coming after
//     the others gave up, fails too, naming some of them.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fault_main_support.hpp"
#include "pmpi_counts.hpp"

using namespace popdist_test;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <instances per host, e.g. 2,2> <the instance that never comes>\n", argv[0]);
    return 2;
  }
  const auto per_host = instances_per_host(argv[1]);
  const int missing = std::stoi(argv[2]);

  popdist::init();
  Verdict verdict;
  const int me = popdist::instance_index();
  const auto& topology = popdist::topology();
  const bool leads = topology.local_instance_index == 0;
  const auto hosts = per_host.size();
  std::uint64_t steps = 0;  // ceil(log2 H): a leader's sends per round
  while ((std::size_t{1} << steps) < hosts) ++steps;

  // 1. Rounds that meet.
  constexpr int kRounds = 100;
  const auto before = popdist_bench::mpi_counts();
  for (int round = 0; round < kRounds; ++round) popdist::synchronize("", {}, popdist::Seconds(30.0));
  for (int round = 0; round < kRounds; ++round) {
    popdist::synchronize();
    popdist::synchronize("", {}, popdist::Seconds(30.0));
  }
  const auto sends = (popdist_bench::mpi_counts() - before).sends;
  const auto expected = leads ? 2 * kRounds * steps : 0;
  verdict.check(sends == expected, "instance " + std::to_string(me) + (leads ? " (a leader)" : "") + " sent " +
                                       std::to_string(sends) + " messages in " + std::to_string(2 * kRounds) +
                                       " timed rounds, expected " + std::to_string(expected));

  // 2. One instance never comes.
  constexpr double kTimeout = 0.5;
  if (me != missing) {
    const auto started = std::chrono::steady_clock::now();
    std::string error = "no error";
    std::vector<int> named;
    try {
      popdist::synchronize("", {}, popdist::Seconds(kTimeout));
    } catch (const popdist::TimeoutError& failure) {
      error = failure.what();
      named = failure.missing_instances();
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("[rank %d] after %.2f s: %s\n", me, took, error.c_str());
    verdict.check(named == std::vector<int>{missing}, "the TimeoutError names exactly instance " +
                                                          std::to_string(missing) + ": " + error);
    verdict.check(took < 3.0, "bounded by the timeout and the roll call (took " + std::to_string(took) + " s)");
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the missing one comes only now
  if (me == missing) {
    std::string error = "no error";
    try {
      popdist::synchronize("", {}, popdist::Seconds(kTimeout));
    } catch (const popdist::TimeoutError& failure) {
      error = failure.what();
    }
    std::printf("[rank %d] late: %s\n", me, error.c_str());
    verdict.check(contains(error, "gave up waiting for this instance"), "the late one fails too: " + error);
  }
  return verdict.finish("timed synchronize across hosts");
}
