// The private logger: level from POPDIST_LOG_LEVEL, first-use configuration once across threads.

#include <catch2/catch.hpp>

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

}  // namespace

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

TEST_CASE("log.set_log_identity accepts a host or none", "[log]") {
  CHECK_NOTHROW(detail::set_log_identity(3, 8, "host"));
  CHECK_NOTHROW(detail::set_log_identity(0, 1, ""));
}

}  // namespace popdist::testing
