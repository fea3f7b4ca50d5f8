// Fault case: a C++ program's own SIGINT handler and interrupt check (popdist/interrupts.hpp)
// end a wait for an instance that does not come. Instance 0 installs a handler that records
// SIGINT and a check that throws once it has; one of its threads sends it SIGINT 0.5 s into the
// wait, while instance 1 would join only after 60 s. The check must abandon the wait (the test's
// timeout is far below 60 s); instance 0 then ends the job, as an uncaught exception would.
//   all     synchronize() over every instance (the host barrier's futex), 2 ranks
//   subset  synchronize(participants={0, 1}) in a job of 3 (a polled nonblocking barrier)
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "popdist/interrupts.hpp"
#include "popdist/popdist.hpp"

namespace {

std::atomic<bool> g_sigint{false};

void on_sigint(int /*signal*/) { g_sigint.store(true); }

struct Interrupted {};

void throw_if_interrupted() {
  if (g_sigint.load()) throw Interrupted{};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "all" && mode != "subset") {
    std::fprintf(stderr, "usage: %s all|subset\n", argv[0]);
    return 2;
  }
  popdist::init();
  const popdist::InstanceSet members = mode == "all" ? popdist::InstanceSet{} : popdist::InstanceSet{0, 1};
  if (popdist::instance_index() == 0) {
    struct sigaction action {};
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    popdist::set_interrupt_check(throw_if_interrupted);
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      kill(getpid(), SIGINT);
    }).detach();
    const auto started = std::chrono::steady_clock::now();
    try {
      popdist::synchronize("", members);
      std::printf("instance 0: synchronize returned without instance 1\n");
    } catch (const Interrupted&) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
      std::printf("instance 0: the program's interrupt check ended synchronize() after %lld ms\n",
                  static_cast<long long>(waited.count()));
    }
    std::fflush(stdout);
    popdist::abort_job(1);  // the barrier is out of step: end the job, nobody left waiting
  }
  if (popdist::instance_index() == 1) std::this_thread::sleep_for(std::chrono::seconds(60));
  popdist::synchronize("", members);
  popdist::finalize();
  return 0;
}
