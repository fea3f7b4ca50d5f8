// Fault case: an environment that is wrong on some instances or contradicts across them.
// Every instance must raise from init() (a popdist::Error whose message contains argv[1]):
// the instance whose own environment is bad its own error, the others a TopologyError naming
// it -- and nobody hangs. With a second argument "views", the failure is a cross-instance one:
// survey_job() (what `popdist topology --all` uses) must still show every instance's view, with
// the same error among the job check's findings.
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
    const auto survey = popdist::survey_job();
    verdict.check(survey.views.size() == static_cast<std::size_t>(popdist::num_instances()),
                  "survey_job() shows every instance's view");
    verdict.check(contains(survey.check.errors_text(), expected),
                  "survey_job()'s findings name '" + expected + "': " + survey.check.errors_text());
    verdict.check(!popdist::is_initialized(), "survey_job() leaves popdist uninitialized");
  }
  return verdict.finish("init fault case");
}
