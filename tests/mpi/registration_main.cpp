// Registration's handshake, a recursive-doubling exchange (protocols/registration/handshake.cpp), at any number of
// ranks (non-powers of two included), counted through the PMPI layer of the scaling benchmark:
//  1. a first registration over all instances sends its schedule's handshake messages per member
//     (protocols/timed/timed_rounds.hpp: at most ceil(log2 k)) when everyone comes at once
//     (as many more at most, the first escalation's presences
//     to its partners, when it took longer than the escalation delay), and the communicator works;
//  2. subsets registered in different orders by instances that do not share them (the stash);
//  3. a member that comes long after the escalation delay, without a timeout: no error;
//  4. (5 ranks or more) two instances registering sets they share in different orders where no
//     Hello of one set reaches a member busy with the other ({0,1,2} against {0,2,3,4}): only
//     the escalation (its presence to the partners) can see it, and it must be an error on every instance of both sets, not a
//     hang;
//  5. (9 ranks or more) {0..7} registered under id 'left' by instance 0, 'right' by instance 3
//     and no id by the others: 0 and 3 are not recursive-doubling partners in a set of 8 (0 XOR 3 is not a power of two), so the ids
//     meet only through the members without one, which pass the first id they learn on.
// With the argument `census` (run with POPDIST_CENSUS_AFTER=0.5), the census of a registration
// without a timeout (protocols/registration/census.hpp) instead:
//  6. (7 ranks or more) {0,1,2,6} and {0,4,5,6}, which instance 0 registers in that order and
//     instance 6 in the other: no Hello or Presence of one set reaches a member of the other
//     (0 and 6 are partners in neither, and neither's partners are in the other set), so only the
//     census finds it, and it must be an error on every instance of both sets, not a hang; again
//     with {0,1,3,6} and {0,2,4,6}, instance 6 coming 1.5 s late (the notice waits for it);
//  7. a member that comes after the census, without a timeout: no error, and the census costs
//     O(log k) messages per member (the all-to-all presence it replaced cost k - 2 more).
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fault_main_support.hpp"
#include "pmpi_counts.hpp"

using namespace popdist_test;

namespace {

/// Steps 6 and 7 (see the top).
int census_steps(Verdict& verdict, int n, int me) {
  // 6. Only the census sees this one: {0, a, b, 6} against {0, c, d, 6}, where 0 and 6 are at
  //    positions 0 and 3 (partners in neither set), 6's partners a and b are not in the second
  //    set and 0's partners c and d not in the first. Twice, with new sets (the first pair is
  //    poisoned): 6 registers at once, then 1.5 s late, when the first set's notice already
  //    waits for it and it finds the conflict as it arrives.
  struct Conflict {
    int a, b, c, d;
    int late_ms;
  };
  for (const auto& conflict : {Conflict{1, 2, 4, 5, 0}, Conflict{1, 3, 2, 4, 1500}}) {
    if (n < 7) break;
    const popdist::InstanceSet first{0, conflict.a, conflict.b, 6};
    const popdist::InstanceSet second{0, conflict.c, conflict.d, 6};
    const auto name = [](const popdist::InstanceSet& set) {
      std::string text;
      for (const auto member : set) text += (text.empty() ? "{" : ", ") + std::to_string(member);
      return text + "}";
    };
    std::string error;
    const auto started = std::chrono::steady_clock::now();
    if (me == 0) {
      error = registration_error(first);
      if (error.empty()) error = registration_error(second);
    } else if (me == 6) {
      std::this_thread::sleep_for(std::chrono::milliseconds(conflict.late_ms));
      error = registration_error(second);
      if (error.empty()) error = registration_error(first);
    } else if (first.count(me) != 0) {
      error = registration_error(first);
    } else if (second.count(me) != 0) {
      error = registration_error(second);
    }
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("[rank %d] after %.2f s: %s\n", me, took, error.c_str());
    if (first.count(me) != 0 || second.count(me) != 0) {
      verdict.check(contains(error, "inconsistent registration") && contains(error, name(first)) &&
                        contains(error, name(second)),
                    "a conflict only the census sees (instance 6 late by " + std::to_string(conflict.late_ms) +
                        " ms): " + error);
    }
    popdist::synchronize();
  }

  // 7. The last instance comes 1.5 s late: after the others' census (0.5 s, about a second long).
  if (n >= 2) {
    popdist::InstanceSet everybody;
    for (int i = 0; i < n; ++i) everybody.insert(i);
    if (me == n - 1) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const auto before = popdist_bench::mpi_counts();
    std::string error;
    try {
      popdist::register_communicator(everybody, "registration/census");
    } catch (const popdist::Error& failure) {
      error = failure.what();
    }
    const auto sends = (popdist_bench::mpi_counts() - before).sends;
    verdict.check(error.empty(), "a member that comes after the census: " + error);
    // The handshake's steps and a presence to each partner (2 x steps), the census's roll call
    // with one member missing (steps + 2, + 1 for a hold), its notice, and a Stale answer.
    const auto bound = 3 * ceil_log2(everybody.size()) + 5;
    std::printf("[rank %d] census step: %llu sends\n", me, static_cast<unsigned long long>(sends));
    verdict.check(sends <= bound, "a member that comes after the census: " + std::to_string(sends) +
                                      " sends, expected at most " + std::to_string(bound));
    if (error.empty()) popdist::synchronize("registration/census");
  }
  popdist::synchronize();
  return verdict.finish("registration census");
}

}  // namespace

int main(int argc, char** argv) {
  popdist::init();
  Verdict verdict;
  const int n = popdist::num_instances();
  if (argc > 1 && std::string(argv[1]) == "census") return census_steps(verdict, n, popdist::instance_index());
  const int me = popdist::instance_index();

  // 1. Everyone at once.
  popdist::InstanceSet everybody;
  for (int i = 0; i < n; ++i) everybody.insert(i);
  popdist::synchronize();
  const auto started = std::chrono::steady_clock::now();
  const auto before = popdist_bench::mpi_counts();
  popdist::register_communicator(everybody, "registration/all");
  const auto sends = (popdist_bench::mpi_counts() - before).sends;
  const auto took = std::chrono::steady_clock::now() - started;
  // This member's schedule: log2 p2 for p2 the largest power of two <= n, one more for a member
  // that a member beyond p2 folds into, 1 for that one.
  std::uint64_t p2 = 1;
  while (p2 * 2 <= static_cast<std::uint64_t>(n)) p2 *= 2;
  const auto position = static_cast<std::uint64_t>(me);
  const std::uint64_t steps = position >= p2                                 ? 1
                              : position + p2 < static_cast<std::uint64_t>(n) ? ceil_log2(everybody.size())
                                                                              : ceil_log2(p2);
  // The first escalation (250 ms) adds one presence to each partner (as many as its steps); a
  // registration that took less than 200 ms cannot have escalated. (The second, to every member,
  // comes after 30 s.)
  if (took < std::chrono::milliseconds(200)) {
    verdict.check(sends == steps, "first registration: " + std::to_string(sends) + " sends, expected " +
                                      std::to_string(steps));
  } else {
    verdict.check(sends >= steps && sends <= 2 * steps,
                  "first registration (slow, may have escalated): " + std::to_string(sends) + " sends, expected " +
                      std::to_string(steps) + " to " + std::to_string(2 * steps));
  }
  popdist::synchronize("registration/all");

  // 2. {1,2} and {0,2}, which instance 2 registers in that order while instance 0 asks for
  //    {0,2} at once: 0's Hello reaches 2 while it is busy with {1,2}, and must wait for it.
  if (n >= 3) {
    if (me == 2) {
      popdist::register_communicator({1, 2});
      popdist::register_communicator({0, 2});
    } else if (me == 0) {
      popdist::register_communicator({0, 2});
    } else if (me == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      popdist::register_communicator({1, 2});
    }
    if (me == 0 || me == 2) popdist::synchronize("", {0, 2});
    if (me == 1 || me == 2) popdist::synchronize("", {1, 2});
  }
  popdist::synchronize();

  // 3. The last instance comes 600 ms late (after the others escalated); no timeout is set.
  if (n >= 2) {
    popdist::InstanceSet tail;  // a set not registered yet: all but instance 0 (from 3 ranks on)
    for (int i = n > 2 ? 1 : 0; i < n; ++i) tail.insert(i);
    if (tail.count(me) != 0) {
      if (me == n - 1) std::this_thread::sleep_for(std::chrono::milliseconds(600));
      std::string error;
      try {
        popdist::register_communicator(tail, "registration/late");
        popdist::synchronize("registration/late");
      } catch (const popdist::Error& failure) {
        error = failure.what();
      }
      verdict.check(error.empty(), "a late member without a timeout: " + error);
    }
  }
  popdist::synchronize();

  // 4. Only the escalation sees this one.
  if (n >= 5) {
    const popdist::InstanceSet small{0, 1, 2};
    const popdist::InstanceSet large{0, 2, 3, 4};
    std::string error;
    if (me == 0 || me == 1) {
      error = registration_error(small);
      if (error.empty() && me == 0) error = registration_error(large);
    } else if (me == 2) {
      error = registration_error(large);
      if (error.empty()) error = registration_error(small);
    } else if (me == 3 || me == 4) {
      error = registration_error(large);
    }
    std::printf("[rank %d] %s\n", me, error.c_str());
    if (me <= 4) {
      verdict.check(contains(error, "inconsistent registration") && contains(error, "{0, 1, 2}") &&
                        contains(error, "{0, 2, 3, 4}"),
                    "a conflict only the escalation sees: " + error);
    }
  }
  popdist::synchronize();

  // 5. Two ids that meet only through members without one.
  if (n >= 9) {
    popdist::InstanceSet eight;
    for (int i = 0; i < 8; ++i) eight.insert(i);
    if (me < 8) {
      const auto error = registration_error(eight, me == 0 ? "left" : me == 3 ? "right" : "");
      verdict.check(contains(error, "inconsistent registration") && contains(error, "'left'") &&
                        contains(error, "'right'"),
                    "two ids passed on through members without one: " + error);
    }
  }
  popdist::synchronize();
  return verdict.finish("registration handshake");
}
