#pragma once
// Host name lookups within one deadline, all at once. Where the hosts' names resolve only through
// ssh's configuration (a login node), each lookup may wait for the resolver's timeout (5 s per
// try here, for one query in about fifty), and one after another at a thousand hosts that was
// minutes of planning. getaddrinfo cannot be cancelled, so each lookup runs on a detached thread
// of its own that writes its answer into state it shares with the caller; one that has not
// answered by the deadline is counted as "no answer" and left to finish (or to end with the
// process) without touching anything the caller still uses. The threads block every signal, so
// that popdist run's forwarding (run/supervise/process_runner.cpp) never runs on them.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// A lookup that may block (getaddrinfo, or a test's fake): the IPv4 address, nullopt when the
/// name does not resolve. Must be callable from any thread, also after its caller returned.
using ResolveIpv4 = std::optional<std::string> (*)(const std::string& name);

struct NameLookup {
  enum class Outcome { kResolved, kUnresolved, kNoAnswer };
  std::string name;
  Outcome outcome = Outcome::kNoAnswer;
  std::string address;  ///< when resolved
};

/// Looks every name up at once and returns when all have answered or `deadline` has passed,
/// whichever comes first: one result per name, in their order.
[[nodiscard]] std::vector<NameLookup> look_up_within(const std::vector<std::string>& names, ResolveIpv4 resolve,
                                                     std::chrono::milliseconds deadline);

/// "node1 10.0.0.1, node2 127.0.1.1; node3 does not resolve; node4 did not answer within 500 ms",
/// the parts that have names only.
[[nodiscard]] std::string describe_lookups(const std::vector<NameLookup>& lookups, std::chrono::milliseconds deadline);

}  // namespace popdist::cli
