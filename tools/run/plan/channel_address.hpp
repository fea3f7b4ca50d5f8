#pragma once
// Where the agents on every host reach popdist run's end of the job's channel (tools/channel):
// an address of this machine that the hosts can reach. For a job on this machine only, 127.0.0.1
// (and the channel listens on loopback only). Across hosts, the source address the kernel picks
// to reach the first host that is not this machine (resolved as run/plan/master_endpoint.hpp
// resolves hosts): the address that host's packets come back to. Hosts that do not resolve (an
// rsh agent's aliases, such as the testbed's fake hosts) or resolve to this machine run here.

#include <string>

#include "job/launch_plan.hpp"
#include "run/plan/master_endpoint.hpp"

namespace popdist::cli {

/// The address and how it was decided (for -v).
struct ChannelAddress {
  std::string address;
  bool loopback = true;  ///< every host is this machine
  std::string decision;
};

[[nodiscard]] ChannelAddress choose_channel_address(const LaunchPlan& plan, const MachineNetwork& network);

}  // namespace popdist::cli
