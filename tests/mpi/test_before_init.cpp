// Collectives before init() are a clear error, not a hang or a crash; the getters need no MPI.
#include <catch2/catch.hpp>
#include <string>

#include "popdist/popdist.hpp"
#include "error_message.hpp"

namespace {
const auto usage_error_of = [](auto&& call) {
  return popdist_test::error_message_of<popdist::UsageError>(call);
};
}  // namespace

TEST_CASE("MPI.before_init: collectives say to call popdist.init()", "[before-init]") {
  CHECK(!popdist::is_initialized());
  CHECK_THAT(usage_error_of([] { popdist::synchronize(); }), Catch::Contains("synchronize") &&
                                                                  Catch::Contains("call popdist.init()"));
  CHECK_THAT(usage_error_of([] { popdist::register_communicator({0}); }),
             Catch::Contains("register_communicator") && Catch::Contains("call popdist.init()"));
  CHECK_THAT(usage_error_of([] { popdist::execute_on_instances({0}, [] {}); }),
             Catch::Contains("execute_on_instances") && Catch::Contains("call popdist.init()"));
  CHECK_THAT(usage_error_of([] { (void)popdist::native_communicator(); }),
             Catch::Contains("call popdist.init()"));
  CHECK_THAT(usage_error_of([] { (void)popdist::instance_views(); }), Catch::Contains("call popdist.init()"));
  CHECK_THAT(usage_error_of([] { popdist::register_grouping_communicators(popdist::ReplicaGrouping(1)); }),
             Catch::Contains("call popdist.init()"));
}

TEST_CASE("MPI.before_init: the getters and replica_ranges need no MPI", "[before-init]") {
  CHECK(popdist::num_instances() >= 1);
  CHECK(popdist::replica_ranges().size() == static_cast<std::size_t>(popdist::num_instances()));
  CHECK(popdist::current_scope().size() == static_cast<std::size_t>(popdist::num_instances()));
  int initialized = 1;
  MPI_Initialized(&initialized);
  CHECK(initialized == 0);  // nothing above started MPI
  popdist::finalize();      // harmless before init
  CHECK(!popdist::is_initialized());
}
