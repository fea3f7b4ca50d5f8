// The one rule for instance sets and timeouts (popdist/arguments.hpp), shared by C++ and Python:
// every message starts with the caller's own API name.

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "popdist/arguments.hpp"
#include "popdist/error.hpp"

namespace popdist::testing {

TEST_CASE("arguments.instances: sorted when valid", "[arguments]") {
  CHECK(checked_instances({3, 1, 2}, 4, "f") == std::vector<int>{1, 2, 3});
  CHECK(checked_instances({0}, 1, "f") == std::vector<int>{0});
  CHECK(checked_instances({}, 2, "synchronize(participants=...)", true).empty());
}

TEST_CASE("arguments.instances: errors name the caller, the values and the range", "[arguments]") {
  CHECK_THROWS_WITH(checked_instances({}, 4, "registerCommunicator"),
                    "registerCommunicator: the set of participants is empty; give at least one instance index in 0..3");
  CHECK_THROWS_WITH(checked_instances({0, 2}, 2, "registerCommunicator"),
                    "registerCommunicator: participant 2 out of range: valid instance indices are 0..1 (2 instances)");
  CHECK_THROWS_WITH(checked_instances({4, -1}, 1, "synchronize(participants=...)"),
                    "synchronize(participants=...): participants 4, -1 out of range: valid instance indices are 0..0 "
                    "(1 instance)");
  CHECK_THROWS_WITH(checked_instances({2, 1, 2, 1, 2}, 4, "execute_on_instances(instances=...)"),
                    "execute_on_instances(instances=...): duplicate participants 1, 2 in [2, 1, 2, 1, 2]: each "
                    "instance may appear once");
  CHECK_THROWS_AS(checked_instances({0, 0}, 1, "f", true), UsageError);
}

TEST_CASE("arguments.instances: errors stay short whatever the list", "[arguments]") {
  std::vector<int> million(1000000);
  for (int i = 0; i < 1000000; ++i) million[static_cast<std::size_t>(i)] = i;
  CHECK_THROWS_WITH(checked_instances(million, 2, "synchronize(participants=...)"),
                    "synchronize(participants=...): participants 2, 3, 4, 5, 6, ... out of range (999,998 of "
                    "1,000,000 participants): valid instance indices are 0..1 (2 instances)");
  CHECK_THROWS_WITH(checked_instances(std::vector<int>(1000000, 1), 2, "registerCommunicator"),
                    "registerCommunicator: duplicate participant 1 in [1, 1, 1, 1, 1, 1, 1, 1, ...] (1,000,000 "
                    "participants): each instance may appear once");
}

TEST_CASE("arguments.instances: a list cut short at the read limit", "[arguments]") {
  CHECK(instance_read_limit(4) == 9);
  // The first 7 of 1,000,000 values were read.
  CHECK_THROWS_WITH(checked_instances({0, 1, 2, 3, 4, 5, 6}, 2, "synchronize(participants=...)", false, 1000000),
                    "synchronize(participants=...): 1,000,000 participants for a job of 2 instances: at most 2 can be "
                    "valid, each instance once (valid instance indices are 0..1); out of range: 2, 3, 4, 5, 6");
  CHECK_THROWS_WITH(checked_instances({0, 0, 0}, 1, "f", false, std::nullopt),
                    "f: more than 3 participants for a job of 1 instance: at most 1 can be valid, each instance once "
                    "(valid instance indices are 0..0); repeated: 0");
  // Read whole: exactly the plain check.
  CHECK(checked_instances({1, 0}, 2, "f", false, 2) == std::vector<int>{0, 1});
}

TEST_CASE("arguments.shown_text: at most 64 characters, cut on a character boundary", "[arguments]") {
  CHECK(shown_text("short") == "short");
  CHECK(shown_text(std::string(1000000, 'x')) == std::string(64, 'x') + "... (1,000,000 bytes)");
  // 63 ASCII bytes then a 2-byte character across the cut: the whole character goes.
  CHECK(shown_text(std::string(63, 'a') + "\xc3\xa9" + std::string(10, 'b')) == std::string(63, 'a') + "... (75 bytes)");
}

TEST_CASE("arguments.timeout: positive seconds or infinity", "[arguments]") {
  CHECK(checked_timeout(0.001, "synchronize") == 0.001);
  CHECK(checked_timeout(30, "synchronize") == 30);
  CHECK(std::isinf(checked_timeout(std::numeric_limits<double>::infinity(), "synchronize")));
}

TEST_CASE("arguments.timeout: 0, negative and NaN are errors naming the caller and value", "[arguments]") {
  CHECK_THROWS_WITH(checked_timeout(0, "synchronize"),
                    Catch::StartsWith("synchronize: timeout=0 seconds is ambiguous") &&
                        Catch::Contains("positive number of seconds, or infinity for no limit"));
  CHECK_THROWS_WITH(checked_timeout(-1, "synchronize(timeout=...)"),
                    Catch::StartsWith("synchronize(timeout=...): timeout=-1 seconds is not a timeout"));
  CHECK_THROWS_WITH(checked_timeout(-std::numeric_limits<double>::infinity(), "s"), Catch::Contains("timeout=-inf"));
  CHECK_THROWS_WITH(checked_timeout(std::nan(""), "s"), Catch::Contains("timeout=nan"));
}

TEST_CASE("arguments.timeout variable: the same rule for POPDIST_SYNC_TIMEOUT", "[arguments]") {
  CHECK(!parsed_timeout_variable(std::nullopt));
  CHECK(!parsed_timeout_variable(std::string_view("inf")));
  CHECK(!parsed_timeout_variable(std::string_view("infinity")));
  CHECK(parsed_timeout_variable(std::string_view("30")) == 30.0);
  CHECK(parsed_timeout_variable(std::string_view("0.25")) == 0.25);
  CHECK(parsed_timeout_variable(std::string_view("1e-3")) == 0.001);
  for (const char* bad : {"", "abc", "-1", "0", "nan", "INF", "-inf", "2s", " 2", "1,5"}) {
    INFO("value '" << bad << "'");
    CHECK_THROWS_WITH(parsed_timeout_variable(std::string_view(bad)),
                      Catch::Contains(std::string("POPDIST_SYNC_TIMEOUT='") + bad + "'") &&
                          Catch::Contains("positive number of seconds") && Catch::Contains("inf for no default"));
    CHECK_THROWS_AS(parsed_timeout_variable(std::string_view(bad)), EnvironmentError);
  }
}

TEST_CASE("arguments.seconds variable: a delay such as POPDIST_CENSUS_AFTER", "[arguments]") {
  CHECK(parsed_seconds_variable("POPDIST_CENSUS_AFTER", "30") == 30.0);
  CHECK(parsed_seconds_variable("POPDIST_CENSUS_AFTER", "0.5") == 0.5);
  for (const char* bad : {"", "abc", "-1", "0", "nan", "inf", "infinity", "2s", " 2"}) {
    INFO("value '" << bad << "'");
    CHECK_THROWS_WITH(parsed_seconds_variable("POPDIST_CENSUS_AFTER", bad),
                      Catch::Contains(std::string("POPDIST_CENSUS_AFTER='") + bad + "'") &&
                          Catch::Contains("positive number of seconds"));
    CHECK_THROWS_AS(parsed_seconds_variable("POPDIST_CENSUS_AFTER", bad), EnvironmentError);
  }
}

}  // namespace popdist::testing
