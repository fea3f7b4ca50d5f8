// Fault case: a timeout bounds every blocking call of the registry, not only synchronize.
//   register  one member (the last) registers a set long after the others' timeout: they raise
//             TimeoutError naming it; it fails too when it comes (the others gave up), instead
//             of entering MPI_Comm_create_group alone; the job still finalizes.
//   execute   with POPDIST_SYNC_TIMEOUT set, one member's function sleeps past it: the others'
//             execute_on_instances raises TimeoutError naming it; it fails too when it comes.
// Run with 2-4 ranks; `execute` needs POPDIST_SYNC_TIMEOUT (0.5).
#include <chrono>
#include <string>
#include <thread>

#include "fault_main_support.hpp"

using namespace popdist_test;

namespace {

struct Outcome {
  std::string kind = "none";
  std::string message;
  std::vector<int> missing;
};

template <class Call>
Outcome outcome_of(Call&& call) {
  Outcome outcome;
  try {
    call();
  } catch (const popdist::TimeoutError& error) {
    outcome = {"TimeoutError", error.what(), error.missing_instances()};
  } catch (const popdist::Error& error) {
    outcome = {"Error", error.what(), {}};
  }
  return outcome;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "register" && mode != "execute") {
    std::fprintf(stderr, "usage: %s register|execute\n", argv[0]);
    return 2;
  }
  popdist::init();
  Verdict verdict;
  const int n = popdist::num_instances();
  const int me = popdist::instance_index();
  const int late = n - 1;
  popdist::InstanceSet everyone;
  for (int i = 0; i < n; ++i) everyone.insert(i);
  const auto started = std::chrono::steady_clock::now();

  Outcome outcome;
  if (mode == "register") {
    if (me == late) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    outcome = outcome_of([&] { popdist::register_communicator(everyone, "late-set", popdist::Seconds(0.5)); });
  } else {
    outcome = outcome_of([&] {
      popdist::execute_on_instances(everyone, [&] {
        if (me == late) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      });
    });
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("[rank %d] %s after %.2f s: %s\n", me, outcome.kind.c_str(), took, outcome.message.c_str());
  verdict.check(outcome.kind == "TimeoutError", "a TimeoutError, got " + outcome.kind + ": " + outcome.message);
  if (me != late) {
    verdict.check(outcome.missing == std::vector<int>{late}, "the TimeoutError names the late instance only");
    verdict.check(contains(outcome.message, "instance " + std::to_string(late)), "the message names it: " + outcome.message);
    verdict.check(took < 1.4, "bounded by the 0.5 s timeout (took " + std::to_string(took) + " s)");
  } else {
    // (The others' roll call sent it at least one message: it fails naming them, without waiting.)
    verdict.check(contains(outcome.message, "gave up waiting for this instance"),
                  "the late one learns that the others gave up: " + outcome.message);
  }
  return verdict.finish(("blocking timeout (" + mode + ")").c_str());
}
