#include "core/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

namespace popdist::detail {
namespace {

std::shared_ptr<spdlog::logger> make_logger() {
  // A plain (uncoloured) stderr sink: these lines end up interleaved in mpirun's output.
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto created = std::make_shared<spdlog::logger>("popdist", std::move(sink));
  created->set_pattern("[popdist] %l: %v");
  created->set_level(spdlog::level::warn);
  created->flush_on(spdlog::level::trace);  // stderr is unbuffered; never lose a line on abort
  return created;
}

std::shared_ptr<spdlog::logger>& instance() {
  static std::shared_ptr<spdlog::logger> the_logger = [] {
    auto created = make_logger();
    return created;
  }();
  return the_logger;
}

// The first logger() call reads POPDIST_LOG_LEVEL once, even when several threads log at once;
// an explicit configure_logger() later still overrides it. A once_flag at namespace scope, as the
// logger itself: popdist::core (no MPI) has no process state, and logging works before init().
std::once_flag g_configured;

void apply_level(spdlog::logger& the_logger, const EnvLookup& env);

}  // namespace

spdlog::logger& logger() {
  auto& the_logger = *instance();
  std::call_once(g_configured, [&] { apply_level(the_logger, process_environment()); });
  return the_logger;
}

void configure_logger(const EnvLookup& env) {
  auto& the_logger = *instance();
  // Mark the first-use configuration done so that it never overrides this explicit one.
  std::call_once(g_configured, [] {});
  apply_level(the_logger, env);
}

namespace {

void apply_level(spdlog::logger& the_logger, const EnvLookup& env) {
  const auto value = env("POPDIST_LOG_LEVEL");
  if (!value || value->empty()) {
    the_logger.set_level(spdlog::level::warn);
    return;
  }
  std::string name = *value;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto level = spdlog::level::from_str(name);
  // from_str maps anything unknown to "off"; only accept "off" when it was really asked for.
  if (level == spdlog::level::off && name != "off") {
    the_logger.set_level(spdlog::level::warn);
    the_logger.warn("POPDIST_LOG_LEVEL='{}' is not a level; expected one of trace, debug, info, warn, error, "
                    "critical, off; using warn",
                    *value);
    return;
  }
  the_logger.set_level(level);
}

}  // namespace

void set_log_identity(int instance_index, int num_instances, const std::string& host) {
  const auto prefix = host.empty() ? fmt::format("[popdist {}/{}]", instance_index, num_instances)
                                   : fmt::format("[popdist {}/{} {}]", instance_index, num_instances, host);
  instance()->set_pattern(prefix + " %l: %v");
}

}  // namespace popdist::detail
