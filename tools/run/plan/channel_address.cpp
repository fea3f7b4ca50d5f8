#include "run/plan/channel_address.hpp"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "run/plan/name_lookup.hpp"

namespace popdist::cli {
namespace {

bool is_loopback(const std::string& address) { return address.rfind("127.", 0) == 0; }

struct Names {
  std::vector<std::string> looked_up;  // the first few distinct, in the plan's order
  std::size_t distinct = 0;
};

Names first_distinct_names(const LaunchPlan& plan) {
  Names names;
  std::set<std::string> seen;
  for (const auto& host : plan.hosts) {
    if (!seen.insert(host.name).second) continue;
    if (names.looked_up.size() < kMostLookups) names.looked_up.push_back(host.name);
  }
  names.distinct = seen.size();
  return names;
}

std::vector<NameLookup> look_up(const std::vector<std::string>& names, const MachineNetwork& network) {
  if (network.resolve_ipv4) return look_up_within(names, network.resolve_ipv4, kLookupDeadline);
  std::vector<NameLookup> unresolved;
  for (const auto& name : names) unresolved.push_back({name, NameLookup::Outcome::kUnresolved, {}});
  return unresolved;
}

// The source address towards the first looked-up host that is another machine, if any.
std::optional<ChannelAddress> towards_another_machine(const std::vector<NameLookup>& lookups,
                                                      const MachineNetwork& network, const std::string& how) {
  for (const auto& lookup : lookups) {
    if (lookup.outcome != NameLookup::Outcome::kResolved || is_loopback(lookup.address)) continue;
    const auto source = network.source_ipv4_towards ? network.source_ipv4_towards(lookup.address) : std::nullopt;
    if (!source || *source == lookup.address) continue;  // no route, or the host is this machine
    return ChannelAddress{*source, false,
                          fmt::format("the job's channel: agents reach popdist run at {} (this machine's address "
                                      "towards {}, {}; {})",
                                      *source, lookup.name, lookup.address, how)};
  }
  return std::nullopt;
}

}  // namespace

ChannelAddress choose_channel_address(const LaunchPlan& plan, const MachineNetwork& network) {
  const Names names = first_distinct_names(plan);
  const auto lookups = look_up(names.looked_up, network);
  const std::string how = fmt::format("looked up {} of {} host name(s) at once within {} ms: {}", lookups.size(),
                                      names.distinct, kLookupDeadline.count(), describe_lookups(lookups, kLookupDeadline));
  if (auto chosen = towards_another_machine(lookups, network, how)) return *chosen;
  bool every_host_here = lookups.size() == names.distinct;
  for (const auto& lookup : lookups) every_host_here = every_host_here && lookup.outcome == NameLookup::Outcome::kResolved;
  // A name only the rsh agent knows, or one not looked up, may still be another machine: this
  // machine's outward address reaches it as well as this machine's own aliases.
  const auto outward = every_host_here || !network.outward_ipv4 ? std::nullopt : network.outward_ipv4();
  if (outward) {
    return {*outward, false,
            fmt::format("the job's channel: agents reach popdist run at {} (this machine's first address: no host "
                        "is known to be another machine; {})",
                        *outward, how)};
  }
  return {"127.0.0.1", true,
          fmt::format("the job's channel: {}, popdist run listens on 127.0.0.1 ({})",
                      every_host_here ? "every host is this machine" : "this machine has no other IPv4 address", how)};
}

}  // namespace popdist::cli
