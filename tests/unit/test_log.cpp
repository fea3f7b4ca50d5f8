// The private logger: level from POPDIST_LOG_LEVEL, first-use configuration once across threads.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/log.hpp"
#include "table_case.hpp"

namespace popdist::testing {
namespace {

struct LevelCase {
  std::string value;  ///< "<unset>" for no variable
  spdlog::level::level_enum level;
};

const std::vector<LevelCase> kLevels = {
    {"<unset>", spdlog::level::warn}, {"", spdlog::level::warn},
    {"trace", spdlog::level::trace},  {"debug", spdlog::level::debug},
    {"info", spdlog::level::info},    {"warn", spdlog::level::warn},
    {"warning", spdlog::level::warn}, {"error", spdlog::level::err},
    {"err", spdlog::level::err},      {"critical", spdlog::level::critical},
    {"off", spdlog::level::off},      {"DEBUG", spdlog::level::debug},
    {"Info", spdlog::level::info},    {"loud", spdlog::level::warn},
    {"offf", spdlog::level::warn},    {"3", spdlog::level::warn},
};

const bool registered = [] {
  for (const auto& row : kLevels) {
    register_case("log.POPDIST_LOG_LEVEL " + (row.value.empty() ? std::string("<empty>") : row.value), "[log]", [row] {
      // Start from a level that differs from the expected one, so the check can fail.
      detail::logger().set_level(row.level == spdlog::level::trace ? spdlog::level::off : spdlog::level::trace);
      const EnvMap env = row.value == "<unset>" ? EnvMap{} : EnvMap{{"POPDIST_LOG_LEVEL", row.value}};
      detail::configure_logger(lookup_in(env));
      CHECK(detail::logger().level() == row.level);
    }, __FILE__, __LINE__);
  }
  return true;
}();

/// Runs `body` with file descriptor 2 redirected to a temporary file; returns what was written.
/// (The logger writes to stderr through its FILE*, which ends up on descriptor 2.)
std::string capture_stderr(const std::function<void()>& body) {
  std::fflush(stderr);
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  const int saved = ::dup(2);
  ::dup2(::fileno(file), 2);
  body();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(file);
  std::string text;
  char buffer[512];
  while (const auto count = std::fread(buffer, 1, sizeof buffer, file)) text.append(buffer, count);
  std::fclose(file);
  return text;
}

}  // namespace

TEST_CASE("log.an unknown level warns naming the value and keeps warn", "[log]") {
  const auto text = capture_stderr([] { detail::configure_logger(lookup_in({{"POPDIST_LOG_LEVEL", "loud"}})); });
  CHECK(detail::logger().level() == spdlog::level::warn);
  CHECK_THAT(text, Catch::Contains("POPDIST_LOG_LEVEL='loud' is not a level") && Catch::Contains("trace, debug"));
}

TEST_CASE("log.lines carry the instance prefix and honour the level", "[log]") {
  detail::configure_logger(lookup_in({{"POPDIST_LOG_LEVEL", "info"}}));
  detail::set_log_identity(3, 8, "node7");
  const auto text = capture_stderr([] {
    detail::logger().info("visible {}", 42);
    detail::logger().debug("hidden");
  });
  CHECK_THAT(text, Catch::Contains("[popdist 3/8 node7] info: visible 42"));
  CHECK_THAT(text, !Catch::Contains("hidden"));
  detail::set_log_identity(0, 1, "");
  const auto without_host = capture_stderr([] { detail::logger().warn("w"); });
  CHECK_THAT(without_host, Catch::Contains("[popdist 0/1] warning: w"));
}

TEST_CASE("log.first use from many threads creates and configures one logger", "[log]") {
  std::vector<spdlog::logger*> seen(16, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] { seen[i] = &detail::logger(); });
  }
  for (auto& thread : threads) thread.join();
  for (auto* logger : seen) CHECK(logger == seen.front());
  CHECK(seen.front()->name() == "popdist");
}

TEST_CASE("log.an explicit configuration is not overridden by first use", "[log]") {
  detail::configure_logger(lookup_in({{"POPDIST_LOG_LEVEL", "critical"}}));
  CHECK(detail::logger().level() == spdlog::level::critical);
}

TEST_CASE("log.the logger is private to popdist", "[log]") {
  (void)detail::logger();
  CHECK(spdlog::get("popdist") == nullptr);  // never in spdlog's global registry
}


}  // namespace popdist::testing
