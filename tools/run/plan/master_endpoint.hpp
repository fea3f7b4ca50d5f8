#pragma once
// torchrun's rendezvous contract for `popdist run` (MASTER_ADDR, MASTER_PORT): where instance 0's
// torch store listens, decided before the program starts so that an unmodified `env://` script
// (torch, Accelerate, Lightning without popdist's plugin) finds it.
//
// Who decides what (docs/guide/torch.md, "popdist run as a drop-in for torchrun"):
// - address: --master-addr, else the user's MASTER_ADDR, else 127.0.0.1 on one host; across hosts
//   the first host's IPv4 address as this (launching) machine resolves it. When that name resolves
//   to loopback (Debian maps a machine's own name to 127.0.1.1) or not at all (an rsh agent's
//   alias, such as the testbed's fake hosts, which run on this machine), the first host is this
//   machine and its outward IPv4 address is given: never a name nobody resolves.
// - port: --master-port, else the user's MASTER_PORT, else a port free on this machine when
//   popdist run starts, outside the kernel's ephemeral range so that no other process is handed
//   it before instance 0 binds it (listen_port.hpp). Only a process on the first host could know
//   a port free there, and the program itself starts the store; so when the port is taken by
//   then, instance 0's store fails at once naming the port (torch: "EADDRINUSE ... port: N"),
//   instance 0 exits non-zero and mpirun ends the job: an error, not a hang. Pass --master-port
//   to choose one.

#include <optional>
#include <string>

#include "job/launch_plan.hpp"
#include "popdist/environment.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

/// The address and port every instance gets, and how they were decided (for -v).
struct MasterEndpoint {
  std::string address;
  int port = 0;
  std::string decision;
};

/// What the machine says, injected so that the rules are testable without a network.
struct MachineNetwork {
  /// IPv4 address of a host name as this machine resolves it; nullopt: it does not resolve.
  std::optional<std::string> (*resolve_ipv4)(const std::string& name) = nullptr;
  /// This machine's first non-loopback IPv4 address; nullopt: it has none.
  std::optional<std::string> (*outward_ipv4)() = nullptr;
  /// A TCP port free on this machine now, which the kernel will not hand to anyone else.
  int (*free_port)() = nullptr;
  /// The source address the kernel picks to reach `ipv4` (a UDP connect: nothing is sent);
  /// nullopt: no route.
  std::optional<std::string> (*source_ipv4_towards)(const std::string& ipv4) = nullptr;
};

/// The real machine's network (getaddrinfo, getifaddrs, a bind outside the ephemeral range, a
/// UDP connect).
[[nodiscard]] MachineNetwork real_network();

/// Decides MASTER_ADDR and MASTER_PORT. Throws UsageError naming --master-port or MASTER_PORT
/// when the port is not an integer in 1..65535, or --master-addr/MASTER_ADDR when empty.
[[nodiscard]] MasterEndpoint choose_master(const LaunchPlan& plan, const RunOptions& options, const EnvLookup& env,
                                           const MachineNetwork& network);

}  // namespace popdist::cli
