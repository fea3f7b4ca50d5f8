#pragma once
// What popdist run tells every agent about fencing (issue 48): --host-timeout, after which an
// agent that has not heard popdist run ends its program, and --grace-period, the teardown's wait
// from SIGTERM to SIGKILL that the fence keeps too. Exported to every instance as variables
// (launcher-independent: no mpirun parameter), read and taken out of the environment by the
// agent (agent/host_fence.hpp) before its program starts. Pure.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "popdist/environment.hpp"  // EnvLookup

namespace popdist::cli {

/// --host-timeout in milliseconds; 0: the agents never fence (as popdist run never finds a host lost).
inline constexpr const char* kHostTimeoutVariable = "POPDIST_HOST_TIMEOUT_MS";
/// --grace-period in seconds.
inline constexpr const char* kGracePeriodVariable = "POPDIST_GRACE_PERIOD";

struct FenceSettings {
  std::chrono::milliseconds host_timeout{0};  ///< 0: never fence
  std::chrono::seconds grace{1};
  [[nodiscard]] bool on() const { return host_timeout.count() > 0; }
};

/// The two variables for --host-timeout `host_timeout` (seconds, 0: off) and --grace-period `grace_period`.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> fence_exports(double host_timeout, int grace_period);

/// The settings from the two variables: the timeout unset means off (an agent started by hand,
/// or by a popdist run from before fencing), the grace unset 1 s. Throws std::invalid_argument
/// naming the variable, its value and what was expected.
[[nodiscard]] FenceSettings fence_settings(const EnvLookup& lookup);

}  // namespace popdist::cli
