#pragma once
// The settings only init() reads (POPDIST_SYNC_TIMEOUT, POPDIST_LOG_LEVEL), checked by
// `popdist topology` too, so that a job's environment can be checked before it is started: a
// timeout init() would refuse is an error, a log level the logger would ignore a warning.

#include <string>
#include <vector>

#include "popdist/environment.hpp"

namespace popdist::cli::topology_cmd {

/// Throws EnvironmentError naming POPDIST_SYNC_TIMEOUT and its value when init() would refuse it
/// (expected: a positive, finite number of seconds such as 30 or 0.5); returns a warning for a
/// POPDIST_LOG_LEVEL that is not trace, debug, info, warn, error, critical or off (any case).
[[nodiscard]] std::vector<std::string> check_init_settings(const EnvLookup& env);

}  // namespace popdist::cli::topology_cmd
