// Under hydra a failed instance ends the job: the watch's verdict is SIGTERM then SIGKILL, with
// the status of the instance that failed first, as its agent said it; nothing before a failure.
#include <catch2/catch.hpp>

#include <optional>

#include "run/supervise/failed_instance_watch.hpp"

using popdist::cli::WatchVerdict;

TEST_CASE("a failed instance's status ends the job, gracefully first", "[watch]") {
  std::optional<int> first_failure;
  const auto watch = popdist::cli::failed_instance_watch([&] { return first_failure; }, std::chrono::seconds(3));
  CHECK_FALSE(watch(1));
  first_failure = 3;
  const auto verdict = watch(1);
  REQUIRE(verdict);
  CHECK(verdict->status == 3);
  CHECK(verdict->ending == WatchVerdict::Ending::sigterm_then_sigkill);
  CHECK(verdict->grace == std::chrono::seconds(3));
  CHECK(verdict->lost.empty());
}
