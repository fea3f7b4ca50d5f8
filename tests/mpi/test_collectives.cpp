// PopDist's C++ API by its names (<popdist/context.hpp>, <popdist/backend.hpp>,
// <popdist/collectives.hpp>): the getters, popdist_error, and the collectives over every element
// type, on all instances and on a named communicator, including non-members.
#include <catch2/catch.hpp>

#include <popdist/backend.hpp>
#include <popdist/collectives.hpp>
#include <popdist/context.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"

using namespace popdist_test;
namespace collectives = popdist::collectives;

TEST_CASE("MPI.collectives: PopDist's getters and backend names", "[collectives]") {
  popdist::init();
  CHECK(popdist::isBackendInitialized());
  CHECK(popdist::getInstanceIndex() == static_cast<unsigned>(world_rank()));
  CHECK(popdist::getNumInstances() == static_cast<unsigned>(world_size()));
  CHECK(popdist::getNumTotalReplicas() == popdist::getNumLocalReplicas() * popdist::getNumInstances());
  CHECK(popdist::getReplicaIndexOffset() == popdist::getInstanceIndex() * popdist::getNumLocalReplicas());
  CHECK(popdist::checkNumIpusPerReplica(popdist::getNumIpusPerReplica()));
  CHECK(popdist::defaultCommunicatorId().empty());
  // every exception popdist throws is a popdist_error
  CHECK_THROWS_AS(popdist::registerCommunicator({world_size()}), popdist::popdist_error);
  CHECK(everyone(true));
}

TEST_CASE("MPI.collectives: broadcast, allReduceSum and allGather over every element type", "[collectives]") {
  popdist::init();
  const int n = world_size();
  const int me = world_rank();
  const int root = n - 1;

  std::vector<float> f(5, static_cast<float>(me));
  collectives::broadcast(f.data(), f.size(), collectives::FLOAT, root, popdist::defaultCommunicatorId());
  CHECK(f == std::vector<float>(5, static_cast<float>(root)));

  std::vector<double> d{1.5 * me, 2.0};
  collectives::allReduceSum(d.data(), d.size(), collectives::DOUBLE);
  const double ranks = n * (n - 1) / 2.0;
  CHECK(d == std::vector<double>{1.5 * ranks, 2.0 * n});

  std::vector<std::int32_t> i32{me, -me};
  collectives::allReduceSum(i32.data(), i32.size());  // typed overload
  CHECK(i32 == std::vector<std::int32_t>{static_cast<std::int32_t>(ranks), -static_cast<std::int32_t>(ranks)});

  const std::int64_t big = std::int64_t(1) << 40;
  std::int64_t mine = big + me;
  std::vector<std::int64_t> all(static_cast<std::size_t>(n));
  collectives::allGather(&mine, all.data(), 1);
  for (int k = 0; k < n; ++k) CHECK(all[static_cast<std::size_t>(k)] == big + k);

  // HALF in 16-bit storage: 1.5 + 0.25 * rank summed in float, rounded once
  std::vector<std::uint16_t> h{collectives::float_to_half(1.5f + 0.25f * static_cast<float>(me))};
  collectives::allReduceSum(h.data(), h.size(), collectives::HALF);
  CHECK(collectives::half_to_float(h[0]) == 1.5f * static_cast<float>(n) + 0.25f * static_cast<float>(ranks));

  std::vector<std::uint32_t> u(3, me == 0 ? 7u : 0u);
  collectives::sequential::broadcast(u.data(), u.size(), collectives::UNSIGNED_INT, 0);
  CHECK(u == std::vector<std::uint32_t>(3, 7u));

  // allGather in place (the receive buffer holds this member's piece already)
  std::vector<std::uint64_t> gathered(static_cast<std::size_t>(n), 0);
  gathered[static_cast<std::size_t>(me)] = 100u + static_cast<std::uint64_t>(me);
  collectives::allGather(&gathered[static_cast<std::size_t>(me)], gathered.data(), 1, collectives::UNSIGNED_LONGLONG);
  for (int k = 0; k < n; ++k) CHECK(gathered[static_cast<std::size_t>(k)] == 100u + static_cast<std::uint64_t>(k));
  CHECK(everyone(true));
}

TEST_CASE("MPI.collectives: a named communicator, non-members and bad roots", "[collectives]") {
  popdist::init();
  const int n = world_size();
  const int me = world_rank();
  // the even instances; root 0 is the first member (instance 0)
  popdist::InstanceSet evens;
  for (int k = 0; k < n; k += 2) evens.insert(k);
  popdist::registerCommunicator(evens, "evens");
  float value = me == 0 ? 42.0f : -1.0f;
  collectives::broadcast(&value, 1, collectives::FLOAT, 0, "evens");
  CHECK(value == (me % 2 == 0 ? 42.0f : -1.0f));  // non-members untouched
  std::int32_t one = 1;
  collectives::allReduceSum(&one, 1, collectives::INT, "evens");
  CHECK(one == (me % 2 == 0 ? static_cast<std::int32_t>(evens.size()) : 1));
  CHECK_THROWS_AS(collectives::broadcast(&value, 1, collectives::FLOAT, n), popdist::UsageError);
  CHECK_THROWS_AS(collectives::broadcast(static_cast<float*>(nullptr), 1, 0), popdist::popdist_error);
  CHECK(everyone(true));
}
