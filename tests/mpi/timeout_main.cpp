// Fault case: one instance (the last) sleeps past the others' timeout.
//  - the others raise TimeoutError naming it (missing_instances == {last});
//  - the late one, when it arrives, fails cleanly too (the others gave up), naming them;
//  - the set is abandoned: a later synchronize over it is an error on every instance, at once;
//  - a timed synchronize over a set whose communicator does not exist yet is bounded as well;
//  - and the job still finalizes and exits (ctest's TIMEOUT would catch a hang).
// Run with 2 or more ranks. With --from-environment the timeout is not passed: it comes from
// POPDIST_SYNC_TIMEOUT (set it to 0.5). With --after-rounds every instance first completes a few
// timed rounds over the root scope, so the late round is not the set's first: the give-up
// notice then meets the receive that earlier rounds left posted, not one posted on arrival.
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "fault_main_support.hpp"

using namespace popdist_test;

int main(int argc, char** argv) {
  const std::string option = argc > 1 ? argv[1] : "";
  const bool from_environment = option == "--from-environment";
  const bool after_rounds = option == "--after-rounds";
  popdist::init();
  Verdict verdict;
  const int n = popdist::num_instances();
  const int me = popdist::instance_index();
  const int late = n - 1;
  const auto timeout = from_environment ? std::optional<popdist::Seconds>() : popdist::Seconds(0.5);

  if (after_rounds) {
    for (int round = 0; round < 3; ++round) popdist::synchronize("", {}, popdist::Seconds(30));
  }
  // 1. The root scope.
  if (me == late) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::string message;
  std::vector<int> missing;
  try {
    popdist::synchronize("", {}, timeout);
    message = "(returned normally)";
  } catch (const popdist::TimeoutError& error) {
    message = error.what();
    missing = error.missing_instances();
  }
  std::printf("[rank %d] %s\n", me, message.c_str());
  if (me != late) {
    verdict.check(missing == std::vector<int>{late}, "the others name the late instance: " + message);
    verdict.check(contains(message, "did not arrive") && contains(message, std::to_string(late)), message);
  } else {
    verdict.check(contains(message, "gave up waiting for this instance"), "the late one fails cleanly: " + message);
  }
  // 2. The abandoned set fails at once everywhere, untimed or timed.
  for (const bool timed : {false, true}) {
    std::string later;
    try {
      if (timed) {
        popdist::synchronize("", {}, timeout);
      } else {
        popdist::synchronize();
      }
    } catch (const popdist::UsageError& error) {
      later = error.what();
    }
    verdict.check(contains(later, "abandoned after a timed-out synchronize"), "abandoned: " + later);
  }
  // 3. A subset never used before, whose communicator does not exist: instance 0 waits for
  //    instance 1, which never comes (from 3 ranks on; with 2, {0, 1} is all instances: the
  //    root scope's set, abandoned above).
  if (n == 2) {
    std::string same_set;
    try {
      popdist::synchronize("", {0, 1}, timeout);
    } catch (const popdist::UsageError& error) {
      same_set = error.what();
    }
    verdict.check(contains(same_set, "abandoned after a timed-out synchronize"), "one set, one barrier: " + same_set);
  } else if (me == 0) {
    std::string first_use;
    try {
      popdist::synchronize("", {0, 1}, timeout);
    } catch (const popdist::TimeoutError& error) {
      first_use = error.what();
    }
    verdict.check(contains(first_use, "instance 1 did not arrive"), "first use is bounded: " + first_use);
  }
  return verdict.finish("timeout fault case");
}
