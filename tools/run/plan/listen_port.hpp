#pragma once
// A TCP port for instance 0's torch store that stays free until the program binds it.
//
// Why not "bind port 0, read the port, release it": the kernel picks such a port from its
// ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), the same range it hands every other
// process's outgoing connection and bind to port 0. Between popdist run releasing the port and
// instance 0 binding it (MPI's start-up, Python's imports: seconds), the kernel may give it to
// someone else, and the job fails with "address already in use". A port outside that range is
// never handed out by the kernel; only a program that asks for it by number can take it.

#include <functional>
#include <optional>
#include <string_view>

namespace popdist::cli {

/// An inclusive range of TCP ports.
struct PortRange {
  int first = 0;
  int last = 0;
};

/// The kernel's ephemeral range from the text of ip_local_port_range ("32768\t60999\n");
/// nullopt when the text is not two ports in order.
[[nodiscard]] std::optional<PortRange> parse_port_range(std::string_view text);

/// The lowest port popdist run offers: below it lie the well-known and most registered services.
inline constexpr int kLowestOfferedPort = 10000;

/// The first port for which `is_free` holds, among kLowestOfferedPort..65535 outside `ephemeral`,
/// counting from the `start`-th such port (modulo their number, so that concurrent launches spread
/// out) and trying at most `attempts`; nullopt when none was free or every port is ephemeral.
[[nodiscard]] std::optional<int> pick_listen_port(PortRange ephemeral, unsigned start,
                                                  const std::function<bool(int)>& is_free, int attempts);

}  // namespace popdist::cli
