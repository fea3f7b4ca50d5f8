#include "run/plan/channel_address.hpp"

#include <fmt/format.h>

namespace popdist::cli {

ChannelAddress choose_channel_address(const LaunchPlan& plan, const MachineNetwork& network) {
  std::string unresolved;
  for (const auto& host : plan.hosts) {
    const auto resolved = network.resolve_ipv4 ? network.resolve_ipv4(host.name) : std::nullopt;
    if (!resolved && unresolved.empty()) unresolved = host.name;
    if (!resolved || resolved->rfind("127.", 0) == 0) continue;
    const auto source = network.source_ipv4_towards ? network.source_ipv4_towards(*resolved) : std::nullopt;
    if (!source || *source == *resolved) continue;  // no route, or the host is this machine
    return {*source, false,
            fmt::format("the job's channel: agents reach popdist run at {} (this machine's address towards {}, {})",
                        *source, host.name, *resolved)};
  }
  // A name only the rsh agent knows may still be another machine: this machine's outward address
  // reaches it as well as this machine's own aliases.
  const auto outward = unresolved.empty() || !network.outward_ipv4 ? std::nullopt : network.outward_ipv4();
  if (outward) {
    return {*outward, false,
            fmt::format("the job's channel: agents reach popdist run at {} (this machine's first address; {} does "
                        "not resolve here)", *outward, unresolved)};
  }
  return {"127.0.0.1", true, "the job's channel: every host is this machine, popdist run listens on 127.0.0.1"};
}

}  // namespace popdist::cli
