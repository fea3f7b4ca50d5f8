// synchronize (root scope, subsets, non-members, timed rounds) and execute_on_instances
// (results, scoping of nested calls and bare synchronize, failures reaching every member).
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "mpi_test_support.hpp"

using namespace popdist_test;
using popdist::InstanceSet;

TEST_CASE("MPI.synchronize: root scope, subsets and non-members", "[synchronize]") {
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  for (int i = 0; i < 10; ++i) popdist::synchronize();
  const InstanceSet ends{0, n - 1};
  popdist::synchronize("", ends);  // created on first use, by its members only
  popdist::synchronize("", ends);
  // A set this instance is not in: returns at once, whatever the others do.
  if (n > 2 && me != 1) {
    CHECK_NOTHROW(popdist::synchronize("", {1}));  // instance 1 never calls it
  }
  CHECK(everyone(true));
}

TEST_CASE("MPI.synchronize: timed rounds when everyone arrives", "[synchronize][timeout]") {
  popdist::init();
  const auto n = world_size();
  const InstanceSet everybody = all_instances(n);
  // Consecutive timed rounds over the same sets stay apart (per-set sequence numbers), and
  // mix with untimed ones.
  for (int round = 0; round < 20; ++round) {
    popdist::synchronize("", {}, popdist::Seconds(20));
    popdist::synchronize("", everybody, popdist::Seconds(20));
    popdist::synchronize("", everybody);
  }
  // A timed call on a set whose communicator does not exist yet creates none.
  const InstanceSet first{0};
  popdist::synchronize("", first, popdist::Seconds(5));
  CHECK(everyone(true));
}

TEST_CASE("MPI.execute_on_instances: results on members, nothing elsewhere", "[execute]") {
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  const InstanceSet first_two = n > 1 ? InstanceSet{0, 1} : InstanceSet{0};
  const auto result = popdist::execute_on_instances(first_two, [&] { return me * 10; });
  CHECK(result.has_value() == (first_two.count(me) != 0));
  if (result) CHECK(*result == me * 10);
  const bool ran = popdist::execute_on_instances(first_two, [] {});
  CHECK(ran == (first_two.count(me) != 0));
  CHECK(everyone(true));
}

TEST_CASE("MPI.execute_on_instances: nested calls and bare synchronize are scoped", "[execute]") {
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  const InstanceSet outer = n > 2 ? InstanceSet{0, 1, 2} : all_instances(n);
  const InstanceSet inner{0};
  InstanceSet seen_outer;
  InstanceSet seen_inner;
  InstanceSet seen_after;
  popdist::execute_on_instances(outer, [&] {
    seen_outer = popdist::current_scope();
    // Scoped to `outer`: were it the world, the instances outside `outer` (which never call it)
    // would make this timed synchronize fail naming them.
    popdist::synchronize("", {}, popdist::Seconds(20));
    popdist::synchronize();
    popdist::execute_on_instances(inner, [&] {
      seen_inner = popdist::current_scope();
      popdist::synchronize("", {}, popdist::Seconds(20));
    });
    seen_after = popdist::current_scope();
  });
  if (outer.count(me) != 0) {
    CHECK(seen_outer == outer);
    CHECK(seen_after == outer);
    if (inner.count(me) != 0) CHECK(seen_inner == inner);
  }
  CHECK(popdist::current_scope() == all_instances(n));
  CHECK(everyone(true));
}

TEST_CASE("MPI.execute_on_instances: a failure reaches every member", "[execute]") {
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  const auto everybody = all_instances(n);
  const int culprit = n - 1;
  std::string own_message;
  int remote_instance = -1;
  std::string remote_type;
  std::string remote_message;
  try {
    popdist::execute_on_instances(everybody, [&] {
      if (me == culprit) throw std::invalid_argument("boom on instance " + std::to_string(me));
    });
  } catch (const popdist::RemoteExecutionError& error) {
    remote_instance = error.failed_instance();
    remote_type = error.exception_type();
    remote_message = error.exception_message();
  } catch (const std::invalid_argument& error) {
    own_message = error.what();
  }
  if (me == culprit) {
    CHECK(own_message == "boom on instance " + std::to_string(culprit));  // its own exception
    CHECK(remote_instance == -1);
  } else {
    CHECK(remote_instance == culprit);
    CHECK(remote_type == "std::invalid_argument");
    CHECK(remote_message == "boom on instance " + std::to_string(culprit));
  }
  // Two failures: the others hear about the lowest; a non-std exception and a custom describer.
  if (n >= 3) {
    std::string heard;
    try {
      popdist::execute_on_instances(
          everybody,
          [&] {
            if (me == 1) throw 42;
            if (me == 2) throw std::runtime_error("second");
          },
          [](std::exception_ptr failure) {
            auto info = popdist::describe_exception(failure);
            info.message = "described: " + info.message;
            return info;
          });
    } catch (const popdist::RemoteExecutionError& error) {
      heard = std::to_string(error.failed_instance()) + " " + error.exception_type() + " " + error.exception_message();
    } catch (...) {
      heard = "own";
    }
    CHECK(heard == (me == 1 || me == 2 ? std::string("own") : std::string("1 int described: unknown exception")));
  }
  // The set is still usable after a failure.
  CHECK(popdist::execute_on_instances(everybody, [] { popdist::synchronize(); }));
  CHECK(everyone(true));
}
