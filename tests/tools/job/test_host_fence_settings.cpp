// What popdist run tells the agents about fencing (job/host_fence_settings.hpp): the two
// variables it exports, and the agent's reading of them, every bad value an error naming the
// variable, its value and what was expected. Pure.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "job/host_fence_settings.hpp"

using namespace popdist::cli;
using namespace std::chrono_literals;

namespace {

std::string error_of(const popdist::EnvMap& variables) {
  try {
    (void)fence_settings(popdist::lookup_in(variables));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("fence_exports: --host-timeout in ms and --grace-period in s", "[fence]") {
  using Exports = std::vector<std::pair<std::string, std::string>>;
  CHECK(fence_exports(10, 1) == Exports{{"POPDIST_HOST_TIMEOUT_MS", "10000"}, {"POPDIST_GRACE_PERIOD", "1"}});
  CHECK(fence_exports(2.5, 30) == Exports{{"POPDIST_HOST_TIMEOUT_MS", "2500"}, {"POPDIST_GRACE_PERIOD", "30"}});
  CHECK(fence_exports(0, 1).front().second == "0");
}

TEST_CASE("fence_settings: what popdist run exported, read back", "[fence]") {
  const auto settings = fence_settings(popdist::lookup_in({{"POPDIST_HOST_TIMEOUT_MS", "2500"}, {"POPDIST_GRACE_PERIOD", "3"}}));
  CHECK(settings.host_timeout == 2500ms);
  CHECK(settings.grace == 3s);
  CHECK(settings.on());
}

TEST_CASE("fence_settings: unset or 0 never fences, and the grace defaults to 1 s", "[fence]") {
  const auto unset = fence_settings(popdist::lookup_in({}));
  CHECK_FALSE(unset.on());
  CHECK(unset.grace == 1s);
  CHECK_FALSE(fence_settings(popdist::lookup_in({{"POPDIST_HOST_TIMEOUT_MS", "0"}})).on());
}

TEST_CASE("fence_settings: a bad value names the variable, the value and what was expected", "[fence]") {
  CHECK(error_of({{"POPDIST_HOST_TIMEOUT_MS", "10s"}}) ==
        "POPDIST_HOST_TIMEOUT_MS='10s': expected milliseconds from 0 (never fence) to a year");
  CHECK(error_of({{"POPDIST_HOST_TIMEOUT_MS", "-1"}}).find("POPDIST_HOST_TIMEOUT_MS='-1'") == 0);
  CHECK(error_of({{"POPDIST_HOST_TIMEOUT_MS", ""}}).find("POPDIST_HOST_TIMEOUT_MS=''") == 0);
  CHECK(error_of({{"POPDIST_HOST_TIMEOUT_MS", "99999999999999999999"}}).find("expected milliseconds") != std::string::npos);
  CHECK(error_of({{"POPDIST_GRACE_PERIOD", "3601"}}) == "POPDIST_GRACE_PERIOD='3601': expected seconds from 0 to 3600");
  CHECK(error_of({{"POPDIST_GRACE_PERIOD", "1.5"}}).find("POPDIST_GRACE_PERIOD='1.5'") == 0);
}
