// The timed synchronize as a recursive-doubling barrier, at any number of ranks (non-powers of
// two included), counted through the PMPI layer of the scaling benchmark:
//  - when everyone arrives, a round sends exactly its schedule's messages per member of a
//    k-member set: log2 p2 for p2 the largest power of two <= k, one more for a member that a
//    member beyond p2 folds into, 1 for that one (at most ceil(log2 k); the all-to-all exchange
//    it replaced sent k - 1), over the root scope and over subsets
//    whose members are not consecutive ({1, 3, 4}, the even instances), many rounds in a row;
//  - when members never come (the last two from 5 ranks on, else the last), every other member
//    names exactly them, through the roll call of the failure path, and the late ones fail
//    naming those that gave up;
//  - over all instances (the root scope, however it is named: one set, one barrier) on one host,
//    the same round runs in shared memory: no message at all, and the missing are named from
//    their slots;
//  - and the job still finalizes.
#include <chrono>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "fault_main_support.hpp"
#include "pmpi_counts.hpp"

using namespace popdist_test;

namespace {

/// One instance, or the last two from 5 ranks on, arrive `late_by` after the others' timeout of
/// 1 s in `synchronize_once`: the others must name exactly them, and they the others' giving up.
void check_missing(Verdict& verdict, int n, int me, const std::function<void()>& synchronize_once,
                   const std::string& what) {
  std::vector<int> late{n - 1};
  if (n >= 5) late = {n - 2, n - 1};
  const bool is_late = me >= late.front();
  if (is_late) std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  std::string message;
  std::vector<int> missing;
  try {
    synchronize_once();
    message = "(returned normally)";
  } catch (const popdist::TimeoutError& error) {
    message = error.what();
    missing = error.missing_instances();
  }
  if (!is_late) {
    verdict.check(missing == late && contains(message, "did not arrive"), what + ": the others name the late: " + message);
  } else {
    verdict.check(contains(message, "gave up waiting for this instance"), what + ": a late one fails: " + message);
  }
}

/// Runs `rounds` timed rounds over `members` (this instance among them) and checks the sends.
void check_rounds(Verdict& verdict, const popdist::InstanceSet& members, const std::string& what) {
  constexpr int kRounds = 25;
  popdist::synchronize("", members, popdist::Seconds(30));  // the first round sets the set up
  const auto before = popdist_bench::mpi_counts();
  for (int round = 0; round < kRounds; ++round) popdist::synchronize("", members, popdist::Seconds(30));
  const auto sends = (popdist_bench::mpi_counts() - before).sends;
  // This member's schedule (protocols/timed/timed_rounds.hpp).
  const auto count = members.size();
  const auto position = static_cast<std::size_t>(
      std::distance(members.begin(), members.find(popdist::instance_index())));
  std::size_t p2 = 1;
  while (p2 * 2 <= count) p2 *= 2;
  const std::uint64_t per_round = position >= p2           ? 1
                                  : position + p2 < count ? ceil_log2(count)
                                                          : ceil_log2(p2);
  const auto expected = kRounds * per_round;
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
  if (evens.count(me) != 0) check_rounds(verdict, evens, "the even instances");
  const popdist::InstanceSet scattered{1, 3, 4};
  if (n >= 5 && scattered.count(me) != 0) check_rounds(verdict, scattered, "{1, 3, 4}");

  // The root scope on one host: the shared-memory round, no message -- named bare or by its
  // participants alike.
  popdist::synchronize("", {}, popdist::Seconds(30));
  const auto before = popdist_bench::mpi_counts();
  for (int round = 0; round < 25; ++round) {
    popdist::synchronize("", round % 2 == 0 ? popdist::InstanceSet{} : everybody, popdist::Seconds(30));
  }
  const auto sends = (popdist_bench::mpi_counts() - before).sends;
  verdict.check(sends == 0, "the root scope on one host sends nothing: " + std::to_string(sends) + " sends");

  // Members that never come: over a set of its own (the point-to-point protocol: all but
  // instance 0, from 3 ranks on), then over the root scope (shared memory).
  if (n >= 2) {
    popdist::InstanceSet all_but_first(std::next(everybody.begin()), everybody.end());
    if (n >= 3 && me != 0) {
      check_missing(verdict, n, me, [&] { popdist::synchronize("missing/set", all_but_first, popdist::Seconds(1)); },
                    "a set");
    }
    MPI_Barrier(MPI_COMM_WORLD);  // instance 0, not a member, starts the next check with the others
    check_missing(verdict, n, me, [] { popdist::synchronize("", {}, popdist::Seconds(1)); }, "the root scope");
  }
  return verdict.finish("timed rounds");
}
