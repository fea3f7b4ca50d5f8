// The communicator registry: content-addressed sets, ids as names, clear errors, creation by
// members only in any order, one communicator per replica group.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"
#include "error_message.hpp"

using namespace popdist_test;
using popdist::InstanceSet;

namespace {
const auto usage_error_of = [](auto&& call) { return popdist_test::error_message_of<popdist::UsageError>(call); };
}  // namespace

TEST_CASE("MPI.registry: the same set twice is one communicator", "[registry]") {
  popdist::init();
  const auto n = world_size();
  const auto everybody = all_instances(n);
  popdist::register_communicator(everybody);
  const auto first = popdist::native_communicator("", everybody);
  popdist::register_communicator(everybody);
  CHECK(popdist::native_communicator("", everybody) == first);
  CHECK(size_of(first) == n);
  // An explicitly registered world set is a communicator of its own, not the root scope's (its
  // barriers are the root's: one set, one barrier).
  CHECK(first != popdist::native_communicator());
  CHECK(everyone(size_of(first) == n));
}

TEST_CASE("MPI.registry: ids name sets", "[registry]") {
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  const InstanceSet first_and_last{0, n - 1};
  popdist::register_communicator(first_and_last, "ends");
  popdist::register_communicator(first_and_last, "ends");  // the same id for the same set: fine
  popdist::register_communicator(first_and_last, "edges");  // a second name for it: fine
  const bool member = me == 0 || me == n - 1;
  CHECK((popdist::native_communicator("ends") != MPI_COMM_NULL) == member);
  CHECK(popdist::native_communicator("ends") == popdist::native_communicator("edges"));
  CHECK(size_of(popdist::native_communicator("ends")) == (member ? static_cast<int>(first_and_last.size()) : 0));
  CHECK_NOTHROW(popdist::synchronize("ends"));  // non-members return at once

  // The same id for another set names both sets.
  if (n > 1) {
    const auto clash = usage_error_of([&] { popdist::register_communicator({0}, "ends"); });
    CHECK_THAT(clash, Catch::Contains("'ends' already names {0, " + std::to_string(n - 1) + "}") &&
                          Catch::Contains("cannot also name {0}"));
  }
  CHECK_THAT(usage_error_of([] { popdist::synchronize("no-such-id"); }),
             Catch::Contains("unknown communicator id 'no-such-id'") && Catch::Contains("'ends'"));
  CHECK(everyone(true));
}

TEST_CASE("MPI.registry: bad participants are named", "[registry]") {
  popdist::init();
  const auto n = world_size();
  CHECK_THAT(usage_error_of([&] { popdist::register_communicator({0, n}); }),
             Catch::Contains("participant " + std::to_string(n) + " out of range") &&
                 Catch::Contains("0.." + std::to_string(n - 1)));
  CHECK_THAT(usage_error_of([&] { popdist::synchronize("", {-1}); }), Catch::Contains("participant -1 out of range"));
  CHECK_THAT(usage_error_of([] { popdist::register_communicator({}); }), Catch::Contains("empty"));
  CHECK_THAT(usage_error_of([] { popdist::synchronize("", {0}, popdist::Seconds(-1)); }),
             Catch::Contains("timeout=-1"));
  CHECK(everyone(true));
}

TEST_CASE("MPI.registry: repeated lookups answer like the first", "[registry][cache]") {
  // Lookups by id or participants go through a per-thread cache of the last one: a call that
  // differs from the cached one only a little (another id, one more member, an unsorted list)
  // must still get its own answer or its own error.
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  const InstanceSet ends{0, n - 1};
  const bool member = me == 0 || me == n - 1;
  for (int i = 0; i < 3; ++i) popdist::synchronize("", ends);  // cached now
  const auto ends_comm = popdist::native_communicator("", ends);
  CHECK((ends_comm != MPI_COMM_NULL) == member);
  // One member more, out of range: an error naming it, although {0, n-1} is cached.
  CHECK_THAT(usage_error_of([&] { popdist::synchronize("", {0, n - 1, n}); }),
             Catch::Contains("participant " + std::to_string(n) + " out of range"));
  // The cached set under a new id registers the id.
  popdist::synchronize("", ends);
  popdist::synchronize("cache-ends", ends);
  CHECK(popdist::native_communicator("cache-ends") == ends_comm);
  // The id, now cached with its set, cannot name another set.
  if (n > 1) {
    CHECK_THAT(usage_error_of([] { popdist::synchronize("cache-ends", {0}); }),
               Catch::Contains("'cache-ends' already names"));
  }
  // An unknown id right after a cached one is still unknown.
  popdist::synchronize("cache-ends");
  CHECK_THAT(usage_error_of([] { popdist::synchronize("cache-end"); }), Catch::Contains("unknown communicator id"));
  // execute_on_instances over the cached set, then over another: each runs on its own members.
  int ran = 0;
  popdist::execute_on_instances(ends, [&] { ++ran; });
  popdist::execute_on_instances({0}, [&] { ++ran; });
  CHECK(ran == (member ? 1 : 0) + (me == 0 ? 1 : 0));
  CHECK_THAT(usage_error_of([] { popdist::execute_on_instances({}, [] {}); }), Catch::Contains("empty"));
  CHECK(everyone(true));
}

TEST_CASE("MPI.registry: registration order may differ for sets that share no pair", "[registry]") {
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  if (n < 3) {
    CHECK(everyone(true));
    return;
  }
  // Instance 0 is in both sets but shares each with a different partner, so the order may
  // differ: instance 0 creates {0,1} first, instance 2 creates {0,2} first (its Hello reaches
  // instance 0 during the {0,1} handshake and must wait there, not be taken for a mismatch).
  const InstanceSet with_one{0, 1};
  const InstanceSet with_two{0, 2};
  if (me == 2) {
    popdist::register_communicator(with_two, "with-two");
    popdist::register_communicator(with_one, "with-one");
  } else {
    if (me == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let 2's Hello arrive first
    popdist::register_communicator(with_one, "with-one");
    popdist::register_communicator(with_two, "with-two");
  }
  CHECK(size_of(popdist::native_communicator("with-one")) == (with_one.count(me) != 0 ? 2 : 0));
  CHECK(size_of(popdist::native_communicator("with-two")) == (with_two.count(me) != 0 ? 2 : 0));
  popdist::synchronize("with-two");
  popdist::synchronize("with-one");
  // Disjoint sets in instance-dependent order.
  if (n >= 4) {
    const InstanceSet low{0, 1};
    const InstanceSet high{2, 3};
    if (me % 2 == 0) {
      popdist::register_communicator(high);
      popdist::register_communicator(low);
    } else {
      popdist::register_communicator(low);
      popdist::register_communicator(high);
    }
    popdist::synchronize("", me < 2 ? low : high);
    CHECK(size_of(popdist::native_communicator("", me < 2 ? low : high)) == 2);
  }
  CHECK(everyone(true));
}

TEST_CASE("MPI.registry: one communicator per replica group", "[registry]") {
  popdist::init();
  const auto n = world_size();
  const auto me = world_rank();
  std::vector<popdist::ReplicaGrouping> groupings{popdist::ReplicaGrouping(n), popdist::ReplicaGrouping(n, 1)};
  if (n % 2 == 0) {
    groupings.emplace_back(n, 2);
    groupings.emplace_back(n, 2, n / 2);
  }
  for (const auto& grouping : groupings) {
    INFO("grouping " << grouping.replication_factor() << "/" << grouping.group_size() << "/" << grouping.stride());
    const auto mine = popdist::register_grouping_communicators(grouping);
    // One replica per instance here: this instance hosts exactly the group of its replica.
    CHECK(mine.size() == 1);
    if (mine.empty()) continue;
    const auto group = grouping.group_of(me);
    CHECK(mine.begin()->first == group);
    const auto comm = popdist::native_communicator(mine.begin()->second);
    CHECK(size_of(comm) == grouping.group_size());
    popdist::synchronize(mine.begin()->second);
    // The communicator's ranks are the group's members in order.
    int rank_in_group = -1;
    MPI_Comm_rank(comm, &rank_in_group);
    const auto members = grouping.members(group);
    CHECK(members[static_cast<std::size_t>(rank_in_group)] == me);
  }
  CHECK_THAT(usage_error_of([&] { popdist::register_grouping_communicators(popdist::ReplicaGrouping(2 * n)); }),
             Catch::Contains("replication factor"));
  CHECK(everyone(true));
}

TEST_CASE("MPI.registry: lookups from several threads", "[registry][threads]") {
  popdist::init();
  const auto n = world_size();
  const auto everybody = all_instances(n);
  popdist::register_communicator(everybody, "everybody");
  const auto expected = popdist::native_communicator("everybody");
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        popdist::register_communicator(everybody);  // cached: no MPI call
        if (popdist::native_communicator("everybody") == expected) ++good[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto count : good) CHECK(count == 2000);
  CHECK(everyone(true));
}

TEST_CASE("MPI.registry: the set of all instances named two ways from two threads", "[registry][threads]") {
  popdist::init();
  int provided = 0;
  MPI_Query_thread(&provided);
  const auto n = world_size();
  const auto everybody = all_instances(n);
  popdist::register_communicator(everybody, "second-world");
  if (provided == MPI_THREAD_MULTIPLE) {
    // Each thread's sequence is the same on every rank. The registered set of all instances is
    // the root scope's set (one set, one barrier): the two threads take turns on it, each call
    // one whole barrier, so every rank makes 400 barriers whatever the interleaving.
    int done_root = 0;
    int done_set = 0;
    std::thread root([&] {
      for (int i = 0; i < 200; ++i, ++done_root) popdist::synchronize();
    });
    std::thread set([&] {
      for (int i = 0; i < 200; ++i, ++done_set) popdist::synchronize("second-world");
    });
    root.join();
    set.join();
    CHECK(done_root == 200);
    CHECK(done_set == 200);
  }
  CHECK(everyone(true));
}
