// One cell of the fault matrix (fault_matrix.py runs the table): instance 1, the victim, fails in
// one way at one phase while every other instance makes that phase's blocking call.
//
//   fault: kill   SIGKILL to itself
//          exit   std::exit(3) (atexit handlers run, MPI is not finalized)
//          raise  a popdist::UsageError escapes main (std::terminate, SIGABRT)
//          stop   SIGSTOP to itself: alive but silent, so only a timeout can end the others
//                 (the stopped cells run with POPDIST_SYNC_TIMEOUT)
//   phase: before_init  the victim fails at once; the others call init() a second later
//          in_init      the others call init() at once; the victim fails 0.3 s later, before its own
//          sync         after init(): the others synchronize() (timed only with POPDIST_SYNC_TIMEOUT)
//          timed_sync   the others synchronize() with an explicit 3 s timeout
//          execute      the others call execute_on_instances over all instances
//          register     the others register_communicator over all instances
//
// Each instance writes one line the driver reads: the victim "victim 1: <fault> at <phase>"
// just before it fails, each survivor "survivor <i>: <outcome>" when its call returns or throws.
// A survivor that catches a popdist error returns 5 from main, as a script would after reporting
// it; nothing here finalizes MPI by hand. The last argument marks the job's processes so that the
// driver can look for any left behind.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

#include "popdist/popdist.hpp"

namespace {

constexpr int victim = 1;
constexpr int survivor_caught_error = 5;

void pause_for(double seconds) { std::this_thread::sleep_for(popdist::Seconds(seconds)); }

[[noreturn]] void fail(const std::string& fault, const std::string& phase) {
  std::printf("victim %d: %s at %s\n", victim, fault.c_str(), phase.c_str());
  std::fflush(stdout);
  if (fault == "kill") std::raise(SIGKILL);
  if (fault == "exit") std::exit(3);
  if (fault == "raise") throw popdist::UsageError("the fault matrix's victim raises at " + phase);
  std::raise(SIGSTOP);
  // Launchers continue a stopped process before they signal it (Open MPI sends SIGCONT, then
  // SIGTERM): stay silent until the signal comes. A launcher that never sends one leaves this
  // process behind, which the driver reports.
  for (;;) pause();
}

/// The phase's blocking call, as a survivor makes it.
void blocking_call(const std::string& phase) {
  if (phase == "before_init" || phase == "in_init") {
    popdist::init();
    return;
  }
  popdist::init();
  popdist::InstanceSet everyone;
  for (int i = 0; i < popdist::num_instances(); ++i) everyone.insert(i);
  if (phase == "sync") popdist::synchronize();
  if (phase == "timed_sync") popdist::synchronize("", {}, popdist::Seconds(3));
  if (phase == "execute") popdist::execute_on_instances(everyone, [] {});
  if (phase == "register") popdist::register_communicator(everyone, "fault-matrix");
}

std::string list(const std::vector<int>& instances) {
  std::string text = "[";
  for (std::size_t i = 0; i < instances.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(instances[i]);
  return text + "]";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string fault = argc == 4 ? argv[1] : "";
  const std::string phase = argc == 4 ? argv[2] : "";
  const bool known_fault = fault == "kill" || fault == "exit" || fault == "raise" || fault == "stop";
  const bool known_phase = phase == "before_init" || phase == "in_init" || phase == "sync" || phase == "timed_sync" ||
                           phase == "execute" || phase == "register";
  if (!known_fault || !known_phase) {
    std::fprintf(stderr,
                 "usage: %s kill|exit|raise|stop before_init|in_init|sync|timed_sync|execute|register <token>\n",
                 argv[0]);
    return 2;
  }
  // Before init() only the launcher's variables say who this is.
  const int me = popdist::detect(popdist::process_environment()).instance_index;
  if (me == victim) {
    if (phase == "before_init") fail(fault, phase);
    if (phase == "in_init") {
      pause_for(0.3);
      fail(fault, phase);
    }
    popdist::init();
    pause_for(0.3);
    fail(fault, phase);
  }
  if (phase == "before_init") pause_for(1.0);
  std::string outcome;
  int status = 0;
  try {
    blocking_call(phase);
    outcome = "completed " + phase;
  } catch (const popdist::TimeoutError& error) {
    outcome = "TimeoutError missing " + list(error.missing_instances()) + ": " + error.what();
    status = survivor_caught_error;
  } catch (const popdist::Error& error) {
    outcome = std::string("Error: ") + error.what();
    status = survivor_caught_error;
  }
  std::printf("survivor %d: %s\n", me, outcome.c_str());
  std::fflush(stdout);
  return status;
}
