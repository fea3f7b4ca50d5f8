// The timed synchronize as a dissemination barrier, at any number of ranks (non-powers of two
// included), counted through the PMPI layer of the scaling benchmark:
//  - when everyone arrives, a round sends exactly ceil(log2 k) messages per member of a k-member
//    set (the all-to-all exchange it replaced sent k - 1), over the root scope and over subsets
//    whose members are not consecutive ({1, 3, 4}, the even instances), many rounds in a row;
//  - when members never come (the last two from 5 ranks on, else the last), every other member
//    names exactly them, through the roll call of the failure path, and the late ones fail
//    naming those that gave up;
//  - and the job still finalizes.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fault_main_support.hpp"
#include "pmpi_counts.hpp"

using namespace popdist_test;

namespace {

std::uint64_t steps_for(std::size_t members) {
  std::uint64_t steps = 0;
  for (std::size_t reach = 1; reach < members; reach *= 2) ++steps;
  return steps;
}

/// Runs `rounds` timed rounds over `members` (this instance among them) and checks the sends.
void check_rounds(Verdict& verdict, const popdist::InstanceSet& members, const std::string& what) {
  constexpr int kRounds = 25;
  popdist::synchronize("", members, popdist::Seconds(30));  // the first round sets the set up
  const auto before = popdist_bench::mpi_counts();
  for (int round = 0; round < kRounds; ++round) popdist::synchronize("", members, popdist::Seconds(30));
  const auto sends = (popdist_bench::mpi_counts() - before).sends;
  const auto expected = kRounds * steps_for(members.size());
  verdict.check(sends == expected, what + ": " + std::to_string(sends) + " sends in " + std::to_string(kRounds) +
                                       " rounds, expected " + std::to_string(expected));
}

}  // namespace

int main() {
  popdist::init();
  Verdict verdict;
  const int n = popdist::num_instances();
  const int me = popdist::instance_index();

  popdist::InstanceSet everybody;
  popdist::InstanceSet evens;
  for (int i = 0; i < n; ++i) {
    everybody.insert(i);
    if (i % 2 == 0) evens.insert(i);
  }
  check_rounds(verdict, everybody, "every instance");
  if (evens.count(me) != 0) check_rounds(verdict, evens, "the even instances");
  const popdist::InstanceSet scattered{1, 3, 4};
  if (n >= 5 && scattered.count(me) != 0) check_rounds(verdict, scattered, "{1, 3, 4}");

  // Members that never come: a set of its own, so that nothing else is abandoned.
  std::vector<int> late{n - 1};
  if (n >= 5) late = {n - 2, n - 1};
  const bool is_late = me >= late.front();
  if (n >= 2) {
    if (is_late) std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    std::string message;
    std::vector<int> missing;
    try {
      popdist::synchronize("missing/all", everybody, popdist::Seconds(1));
      message = "(returned normally)";
    } catch (const popdist::TimeoutError& error) {
      message = error.what();
      missing = error.missing_instances();
    }
    if (!is_late) {
      verdict.check(missing == late && contains(message, "did not arrive"), "the others name the late: " + message);
    } else {
      verdict.check(contains(message, "gave up waiting for this instance"), "a late one fails cleanly: " + message);
    }
  }
  return verdict.finish("timed rounds");
}
