#include "topology/init_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "common/argument_text.hpp"
#include "popdist/arguments.hpp"
#include "popdist/error.hpp"

namespace popdist::cli::topology_cmd {

// The same rules as init() (POPDIST_SYNC_TIMEOUT) and popdist's logger (POPDIST_LOG_LEVEL).
std::vector<std::string> check_init_settings(const EnvLookup& env) {
  std::vector<std::string> warnings;
  if (const auto timeout = env("POPDIST_SYNC_TIMEOUT")) {
    // The rule is the core's (popdist/arguments.hpp); the message shows the value the way every
    // CLI error does (escaped, shortened when huge).
    try {
      (void)parsed_timeout_variable(*timeout);
    } catch (const EnvironmentError&) {
      throw EnvironmentError(fmt::format("POPDIST_SYNC_TIMEOUT={} is not a timeout: expected a positive number of "
                                         "seconds such as 30 or 0.5, or inf for none (init() would refuse it)",
                                         shown(*timeout)));
    }
  }
  if (const auto level = env("POPDIST_LOG_LEVEL"); level && !level->empty()) {
    std::string name = *level;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    constexpr std::array<const char*, 7> levels{"trace", "debug", "info", "warn", "error", "critical", "off"};
    if (std::find(levels.begin(), levels.end(), name) == levels.end()) {
      warnings.push_back(fmt::format("POPDIST_LOG_LEVEL={} is not a level; expected one of trace, debug, info, warn, "
                                     "error, critical, off (popdist's logger would use warn)",
                                     shown(*level)));
    }
  }
  return warnings;
}

}  // namespace popdist::cli::topology_cmd
