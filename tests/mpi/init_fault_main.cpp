// Fault case: an environment that is wrong on some instances or contradicts across them.
// Every instance must raise from init() (a popdist::Error whose message contains argv[1]):
// the instance whose own environment is bad its own error, the others a TopologyError naming
// it -- and nobody hangs. With a second argument "views", the failure is a cross-instance one:
// every instance's gathered view must still be available (for `popdist topology --all`).
#include "fault_main_support.hpp"

using namespace popdist_test;

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s <text every instance's error must contain> [views]\n", argv[0]);
    return 2;
  }
  const std::string expected = argv[1];
  std::string message;
  std::string kind;
  try {
    popdist::init();
    kind = "none";
  } catch (const popdist::TopologyError& error) {
    kind = "TopologyError";
    message = error.what();
  } catch (const popdist::EnvironmentError& error) {
    kind = "EnvironmentError";
    message = error.what();
  }
  Verdict verdict;  // MPI is up: init() started it before it failed
  std::printf("[rank %d] %s: %s\n", Verdict::rank(), kind.c_str(), message.c_str());
  verdict.check(kind != "none", "init() must fail");
  verdict.check(contains(message, expected), "the error names '" + expected + "': " + message);
  verdict.check(!popdist::is_initialized(), "not initialized after a failed init()");
  if (argc == 3) {
    std::size_t views = 0;
    try {
      views = popdist::instance_views().size();
    } catch (const popdist::UsageError&) {
      views = 0;
    }
    verdict.check(views == static_cast<std::size_t>(popdist::num_instances()), "every instance's view is kept");
  }
  return verdict.finish("init fault case");
}
