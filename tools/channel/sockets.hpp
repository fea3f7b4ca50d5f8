#pragma once
// The TCP calls only the channel makes, each with its error named: listen and connect (IPv4 or
// IPv6, via getaddrinfo; a connection retried while refused, since popdist run's server may not
// listen yet) and the port the kernel picked. What every process uses -- the owned descriptor,
// whole writes, Unix sockets, the wake-up -- is in tools/io.

#include <chrono>
#include <string>

#include "io/fd.hpp"

namespace popdist::cli::channel {

/// A listening TCP socket on `address` ("" = every address) and `port` (0 = the kernel picks);
/// throws std::system_error / std::invalid_argument naming the address.
[[nodiscard]] io::Fd listen_tcp(const std::string& address, int port);
/// The port a bound socket listens on.
[[nodiscard]] int local_port(int fd);
/// A blocking TCP connection to `address`:`port`, retried until `deadline` while refused; throws.
[[nodiscard]] io::Fd connect_tcp(const std::string& address, int port, std::chrono::steady_clock::time_point deadline);

}  // namespace popdist::cli::channel
