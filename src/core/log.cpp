#include "core/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <memory>

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

bool g_configured = false;

}  // namespace

spdlog::logger& logger() {
  auto& the_logger = instance();
  if (!g_configured) {
    g_configured = true;
    configure_logger(process_environment());
  }
  return *the_logger;
}

void configure_logger(const EnvLookup& env) {
  g_configured = true;
  auto& the_logger = *instance();
  const auto value = env("POPDIST_LOG_LEVEL");
  if (!value || value->empty()) {
    the_logger.set_level(spdlog::level::warn);
    return;
  }
  const auto level = spdlog::level::from_str(*value);
  // from_str maps anything unknown to "off"; only accept "off" when it was really asked for.
  if (level == spdlog::level::off && *value != "off") {
    the_logger.set_level(spdlog::level::warn);
    the_logger.warn("POPDIST_LOG_LEVEL='{}' is not a level; expected one of trace, debug, info, warn, error, "
                    "critical, off; using warn",
                    *value);
    return;
  }
  the_logger.set_level(level);
}

void set_log_identity(int instance_index, int num_instances, const std::string& host) {
  const auto prefix = host.empty() ? fmt::format("[popdist {}/{}]", instance_index, num_instances)
                                   : fmt::format("[popdist {}/{} {}]", instance_index, num_instances, host);
  instance()->set_pattern(prefix + " %l: %v");
}

}  // namespace popdist::detail
