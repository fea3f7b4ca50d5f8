// The next attempt after a lost host (run/plan/next_attempt.hpp): a pure function, so every case
// is a table row.
#include <catch2/catch.hpp>

#include "job/launch_plan.hpp"
#include "run/options/validation.hpp"
#include "run/plan/next_attempt.hpp"

using Catch::Matchers::Contains;
using namespace popdist::cli;
using std::chrono::milliseconds;

namespace {

RunOptions job(int instances, std::optional<int> replicas, std::optional<int> min_instances) {
  RunOptions options;
  options.program = {"true"};
  options.num_instances = instances;
  options.num_replicas = replicas;
  options.min_instances = min_instances;
  options.max_restarts = 1;
  return options;
}

std::vector<HostSpec> hosts(int count) {
  std::vector<HostSpec> specs;
  for (int i = 1; i <= count; ++i) specs.push_back({"h" + std::to_string(i), std::nullopt});
  return specs;
}

std::vector<std::string> names(const std::vector<HostSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& spec : specs) out.push_back(spec.name);
  return out;
}

}  // namespace

TEST_CASE("next_attempt: every host count, lost count and minimum", "[next_attempt]") {
  // 2 instances per host, 4 replicas per instance; every subset size lost and every minimum.
  for (int count = 1; count <= 4; ++count) {
    for (int lost_count = 0; lost_count <= count; ++lost_count) {
      for (int min = 1; min <= 2 * count; ++min) {
        std::set<std::string> lost;
        for (int i = count - lost_count + 1; i <= count; ++i) lost.insert("h" + std::to_string(i));
        const auto next = next_attempt(job(2 * count, 8 * count, min), hosts(count), lost);
        const int left = 2 * (count - lost_count);
        CAPTURE(count, lost_count, min);
        CHECK(next.num_instances == (lost_count == 0 ? 2 * count : left));
        CHECK(next.num_replicas == 4 * next.num_instances);
        const bool refused = lost_count > 0 && left < min;
        CHECK(next.refusal.empty() == !refused);
        if (refused) CHECK_THAT(next.refusal, Contains("fewer than --min-instances " + std::to_string(min)));
        CHECK(static_cast<int>(next.hosts.size()) == (lost_count == 0 ? count : count - lost_count));
        if (!refused) CHECK(option_problems(with_counts(job(2 * count, 8 * count, min), next)).empty());
      }
    }
  }
}

TEST_CASE("next_attempt keeps the order of the hosts left and leaves out the middle one", "[next_attempt]") {
  const auto next = next_attempt(job(6, std::nullopt, 4), hosts(3), {"h2"});
  CHECK(next.refusal.empty());
  CHECK(names(next.hosts) == std::vector<std::string>{"h1", "h3"});
  CHECK(next.num_instances == 4);
  CHECK(next.num_replicas == 4);  // one replica per instance, as before
  CHECK_FALSE(with_counts(job(6, std::nullopt, 4), next).num_replicas.has_value());
}

TEST_CASE("next_attempt: without --min-instances the job never shrinks", "[next_attempt]") {
  const auto next = next_attempt(job(4, std::nullopt, std::nullopt), hosts(2), {"h2"});
  CHECK_THAT(next.refusal, Contains("lost host(s) h2: the job does not shrink without --min-instances"));
  CHECK(next_attempt(job(4, std::nullopt, std::nullopt), hosts(2), {}).refusal.empty());
}

TEST_CASE("next_attempt: a name that is not a host of the job changes nothing", "[next_attempt]") {
  const auto next = next_attempt(job(4, 8, 2), hosts(2), {"elsewhere"});
  CHECK(next.refusal.empty());
  CHECK(next.num_instances == 4);
  CHECK(next.num_replicas == 8);
  CHECK(names(next.hosts) == std::vector<std::string>{"h1", "h2"});
}

TEST_CASE("next_attempt refuses when PopDist's rules fail on the new counts", "[next_attempt]") {
  auto options = job(6, 6, 2);
  options.num_ilds = 3;  // 6 devices in 3 domains; 4 devices do not divide into 3
  const auto next = next_attempt(options, hosts(3), {"h3"});
  CHECK_THAT(next.refusal, Contains("break PopDist's rules"));
  CHECK_THAT(next.refusal, Contains("--num-ilds 3"));
  auto only = job(6, std::nullopt, 2);
  only.only_output_from_instance = 5;
  CHECK_THAT(next_attempt(only, hosts(3), {"h3"}).refusal, Contains("--only-output-from-instance 5"));
}
