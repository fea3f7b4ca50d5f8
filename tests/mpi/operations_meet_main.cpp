// Fault case (issue 37): two different popdist operations meet. Instance 0 enters one of popdist's
// own collectives -- a byte collective (`bytes`: the allgather behind popdist.torch's seed
// agreement), PopDist's allReduceSum (`allreduce`), execute_on_instances' agreement (`execute`)
// -- while every other instance is in synchronize(). Run with POPDIST_SYNC_TIMEOUT: every
// instance must fail, none may return as if it had met, and each error must name both
// operations. (They used to meet in one barrier: the synchronize returned and the collective
// waited for a partner that never came, or never ended at all.)
#include <cstdio>
#include <cstring>
#include <string>

#include "fault_main_support.hpp"
#include "popdist/collectives.hpp"

using namespace popdist_test;

namespace {

/// Instance 0's call, and the words its errors must contain.
struct Operation {
  const char* mode;
  const char* named;  ///< in every instance's error
  void (*call)();
};

const Operation kOperations[] = {
    {"bytes", "popdist.torch.DistributedSampler (allgather of bytes)",
     [] { (void)popdist::detail::allgather_bytes("seed", std::nullopt, "popdist.torch.DistributedSampler"); }},
    // torch's own timeout (30 min) on the agreement: instance 0 fails as soon as it hears from the
    // others, which give up at POPDIST_SYNC_TIMEOUT; the test's TIMEOUT fails it otherwise.
    {"bytes-long", "popdist.torch.DistributedSampler (allgather of bytes)",
     [] { (void)popdist::detail::allgather_bytes("seed", 1800.0, "popdist.torch.DistributedSampler"); }},
    {"allreduce", "allReduceSum",
     [] {
       float value = 1;
       popdist::collectives::allReduceSum(&value, 1);
     }},
    {"execute", "execute_on_instances (the agreement on the outcome)",
     [] { popdist::execute_on_instances(popdist::current_scope(), [] {}); }},
};

}  // namespace

int main(int argc, char** argv) {
  const Operation* operation = nullptr;
  for (const auto& candidate : kOperations) {
    if (argc == 2 && std::strcmp(argv[1], candidate.mode) == 0) operation = &candidate;
  }
  if (operation == nullptr) {
    std::fprintf(stderr, "usage: %s bytes|bytes-long|allreduce|execute (with POPDIST_SYNC_TIMEOUT set)\n", argv[0]);
    return 2;
  }
  popdist::init();
  const int me = popdist::instance_index();
  std::string error;
  try {
    if (me == 0) {
      operation->call();
    } else {
      popdist::synchronize();
    }
  } catch (const popdist::Error& e) {
    error = e.what();
  }
  Verdict verdict;
  std::printf("instance %d: %s\n", me, error.empty() ? "returned" : error.c_str());
  std::fflush(stdout);
  verdict.check(!error.empty(), "the call must fail: the other instances were in another operation");
  verdict.check(contains(error, operation->named), std::string("the error names ") + operation->named);
  verdict.check(contains(error, "synchronize"), "the error names synchronize");
  if (me != 0) verdict.check(contains(error, "instance 0 is in"), "the error says what instance 0 was doing");
  return verdict.finish("operations meet");
}
