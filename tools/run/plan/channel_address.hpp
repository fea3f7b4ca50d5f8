#pragma once
// Where the agents on every host reach popdist run's end of the job's channel (tools/channel):
// an address of this machine that the hosts can reach. For a job on this machine only, 127.0.0.1
// (and the channel listens on loopback only). Across hosts, the source address the kernel picks
// to reach the first host that is another machine: the address that host's packets come back to.
// Only the first kMostLookups distinct host names are looked up, all at once and within
// kLookupDeadline (run/plan/name_lookup.hpp): planning must not wait for a resolver once per
// host. When none of them is known to be another machine (names only the rsh agent knows, such
// as the testbed's fake hosts or a login node's hosts; names that did not answer in time; hosts
// left unlooked-up) this machine's outward address is given, which reaches it from another
// machine as from its own aliases; 127.0.0.1 only when every host was looked up and is this machine.

#include <chrono>
#include <cstddef>
#include <string>

#include "job/launch_plan.hpp"
#include "run/plan/master_endpoint.hpp"

namespace popdist::cli {

/// How many distinct host names are looked up, and how long planning waits for them at most.
inline constexpr std::size_t kMostLookups = 8;
inline constexpr std::chrono::milliseconds kLookupDeadline{500};

/// The address and how it was decided (for -v).
struct ChannelAddress {
  std::string address;
  bool loopback = true;  ///< every host is this machine
  std::string decision;
};

[[nodiscard]] ChannelAddress choose_channel_address(const LaunchPlan& plan, const MachineNetwork& network);

}  // namespace popdist::cli
