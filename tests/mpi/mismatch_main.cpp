// Fault case: inconsistent registrations are errors on every instance involved, not a hang.
//  1. instance 0 registers {0,1} while instances 1 and 2 register {0,1,2};
//  2. instances 0 and 1 register {0,1} under different ids;
//  3. a poisoned set fails again at once.
// Run with 3 or more ranks (instances from 3 on are not involved and must return normally).
#include "fault_main_support.hpp"

using namespace popdist_test;

int main() {
  popdist::init();
  Verdict verdict;
  const int me = popdist::instance_index();

  // 1. Different sets.
  const auto first = registration_error(me == 0 ? popdist::InstanceSet{0, 1} : popdist::InstanceSet{0, 1, 2});
  std::printf("[rank %d] %s\n", me, first.c_str());
  if (me <= 2) {
    verdict.check(contains(first, "inconsistent registration") && contains(first, "{0, 1}") &&
                      contains(first, "{0, 1, 2}"),
                  "different sets: " + first);
  } else {
    verdict.check(first.empty(), "an instance in neither set is not involved: " + first);
  }
  popdist::synchronize();  // everyone got here: nobody hangs

  // 2. The same set under two ids (instances 0 and 1 only; {1,2} so the set is fresh).
  std::string second;
  if (me == 1 || me == 2) second = registration_error({1, 2}, me == 1 ? "pair" : "twin");
  if (me == 1 || me == 2) {
    verdict.check(contains(second, "'pair'") && contains(second, "'twin'"), "different ids: " + second);
  }
  popdist::synchronize();

  // 3. Poisoned: instance 0 registering {0,1} again fails at once (no MPI call involved).
  if (me == 0) {
    const auto again = registration_error({0, 1});
    verdict.check(contains(again, "inconsistent registration"), "poisoned: " + again);
  }
  return verdict.finish("registration mismatch fault case");
}
