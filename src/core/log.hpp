#pragma once
// popdist's private logger (design.md §7). Never registered with spdlog's global registry, so a
// host program's spdlog configuration and ours never touch; plain stderr sink; each line carries
// the instance prefix "[popdist 3/8 host]"; level from POPDIST_LOG_LEVEL (default warn).

#include <spdlog/logger.h>

#include <string>

#include "popdist/environment.hpp"

namespace popdist::detail {

/// The logger; created on first use with the level from POPDIST_LOG_LEVEL in the process environment.
spdlog::logger& logger();

/// Sets the level from POPDIST_LOG_LEVEL in `env` (trace, debug, info, warn, error, critical, off).
/// An unknown value keeps the default (warn) and logs a warning that names the value.
void configure_logger(const EnvLookup& env);

/// Sets the prefix to "[popdist <instance>/<num_instances> <host>]" (host omitted when empty).
void set_log_identity(int instance_index, int num_instances, const std::string& host);

}  // namespace popdist::detail
