#include "run/plan/master_endpoint.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>

#include "popdist/error.hpp"
#include "run/plan/listen_port.hpp"

namespace popdist::cli {
namespace {

std::optional<std::string> resolve_ipv4(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return std::nullopt;
  char text[INET_ADDRSTRLEN] = {};
  const auto* address = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  ::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text);
  ::freeaddrinfo(found);
  return std::string(text);
}

std::optional<std::string> outward_ipv4() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> result;
  for (const ifaddrs* entry = list; entry != nullptr && !result; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    const auto* address = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if ((ntohl(address->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text);
    result = text;
  }
  ::freeifaddrs(list);
  return result;
}

std::optional<std::string> source_ipv4_towards(const std::string& ipv4) {
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(9);  // any port: a UDP connect only picks the route
  if (::inet_pton(AF_INET, ipv4.c_str(), &peer.sin_addr) != 1) return std::nullopt;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in source{};
  socklen_t size = sizeof source;
  std::optional<std::string> result;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof peer) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&source), &size) == 0) {
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &source.sin_addr, text, sizeof text);
    result = text;
  }
  ::close(fd);
  return result;
}

// Whether nobody has the port now: a bind to it on every address, without SO_REUSEADDR, succeeds.
bool port_is_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

constexpr const char* kEphemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range";

// A free port outside the kernel's ephemeral range (listen_port.hpp says why), starting at a
// random one so that launches running side by side do not try the same ports in the same order.
int free_port() {
  std::ifstream file(kEphemeralRangeFile);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto ephemeral = parse_port_range(text);
  if (!ephemeral) {
    throw Error(fmt::format("popdist run: cannot read the kernel's ephemeral port range from {} ('{}'), so it "
                            "cannot choose a MASTER_PORT that stays free; pass --master-port",
                            kEphemeralRangeFile, text));
  }
  constexpr int attempts = 200;
  const auto port = pick_listen_port(*ephemeral, std::random_device{}(), port_is_free, attempts);
  if (!port) {
    throw Error(fmt::format("popdist run: no free TCP port for MASTER_PORT among {} tried in {}..65535 outside the "
                            "kernel's ephemeral range {}..{}; pass --master-port",
                            attempts, kLowestOfferedPort, ephemeral->first, ephemeral->last));
  }
  return *port;
}

bool is_loopback(const std::string& address) { return address.rfind("127.", 0) == 0; }

int parse_port(const std::string& text, const std::string& what) {
  int port = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535) {
    throw UsageError(fmt::format("{} '{}' is not a TCP port: expected an integer in 1..65535", what, text));
  }
  return port;
}

}  // namespace

MachineNetwork real_network() { return {resolve_ipv4, outward_ipv4, free_port, source_ipv4_towards}; }

MasterEndpoint choose_master(const LaunchPlan& plan, const RunOptions& options, const EnvLookup& env,
                             const MachineNetwork& network) {
  MasterEndpoint endpoint;
  std::string address_source;
  const auto user_address = env("MASTER_ADDR");
  if (options.master_addr) {
    if (options.master_addr->empty()) throw UsageError("--master-addr '' is empty: expected an address of the first host");
    endpoint.address = *options.master_addr;
    address_source = "--master-addr";
  } else if (user_address && !user_address->empty()) {
    endpoint.address = *user_address;
    address_source = "your MASTER_ADDR";
  } else if (plan.hosts.size() == 1) {
    endpoint.address = "127.0.0.1";
    address_source = "one host: loopback";
  } else {
    const std::string& first = plan.hosts.front().name;
    const auto resolved = network.resolve_ipv4(first);
    if (resolved && !is_loopback(*resolved)) {
      endpoint.address = *resolved;
      address_source = fmt::format("the first host {} as this machine resolves it", first);
    } else {
      // The first host is this machine (its name maps to loopback, or only the rsh agent knows
      // the name, as for the testbed's fake hosts): the others reach it on its outward address.
      const auto outward = network.outward_ipv4();
      if (!outward) {
        throw UsageError(fmt::format("cannot choose MASTER_ADDR: the first host {} {} and this machine has no "
                                     "non-loopback IPv4 address; pass --master-addr",
                                     first, resolved ? "resolves to loopback" : "does not resolve"));
      }
      endpoint.address = *outward;
      address_source = fmt::format("the first host {} {}: taken as this machine, its outward address", first,
                                   resolved ? fmt::format("resolves to {}", *resolved) : "does not resolve here");
    }
  }
  std::string port_source;
  if (options.master_port) {
    endpoint.port = parse_port(std::to_string(*options.master_port), "--master-port");
    port_source = "--master-port";
  } else if (const auto user_port = env("MASTER_PORT"); user_port && !user_port->empty()) {
    endpoint.port = parse_port(*user_port, "MASTER_PORT");
    port_source = "your MASTER_PORT";
  } else {
    endpoint.port = network.free_port();
    port_source = "free on this machine now, outside the kernel's ephemeral range";
  }
  endpoint.decision = fmt::format("torchrun's contract: MASTER_ADDR={} ({}), MASTER_PORT={} ({})", endpoint.address,
                                  address_source, endpoint.port, port_source);
  return endpoint;
}

}  // namespace popdist::cli
