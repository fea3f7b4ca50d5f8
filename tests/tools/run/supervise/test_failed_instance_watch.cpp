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

TEST_CASE("a stopped job is SIGKILLed once its grace has passed since the stop was seen", "[watch]") {
  int stop = 0;
  const auto patient = popdist::cli::stopped_job_watch([&] { return stop; }, std::chrono::hours(1));
  auto now = popdist::cli::stopped_job_watch([&] { return stop; }, std::chrono::milliseconds(0));
  CHECK_FALSE(now(1));
  stop = 15;
  auto copy = patient;
  CHECK_FALSE(copy(1));  // seen now: an hour to go
  const auto verdict = now(1);
  REQUIRE(verdict);
  CHECK(verdict->status == 143);
  CHECK(verdict->ending == WatchVerdict::Ending::sigkill);
}

TEST_CASE("under hydra a verdict that waits for the launcher's teardown is bounded by the grace", "[watch]") {
  const auto stall = [](pid_t) -> std::optional<WatchVerdict> { return WatchVerdict{125, WatchVerdict::Ending::sigterm, {}, {}}; };
  const auto bounded = popdist::cli::bounded_by_grace(stall, std::chrono::seconds(3));
  const auto verdict = bounded(1);
  REQUIRE(verdict);
  CHECK(verdict->status == 125);
  CHECK(verdict->ending == WatchVerdict::Ending::sigterm_then_sigkill);
  CHECK(verdict->grace == std::chrono::seconds(3));
  const auto kill = [](pid_t) -> std::optional<WatchVerdict> { return WatchVerdict{137, WatchVerdict::Ending::sigkill, {}, {}}; };
  CHECK(popdist::cli::bounded_by_grace(kill, std::chrono::seconds(3))(1)->ending == WatchVerdict::Ending::sigkill);
  CHECK_FALSE(popdist::cli::bounded_by_grace([](pid_t) { return std::optional<WatchVerdict>(); }, std::chrono::seconds(3))(1));
}
