#pragma once
// One TCP connection attempt to popdist run's channel, bounded: a non-blocking connect() polled
// until a deadline, so that a firewall that drops packets (a connect() that would block for
// minutes) costs the probe no more than its time. Nothing is sent: the channel's server closes a
// connection that ends before its Hello without a word.

#include <chrono>
#include <string>

namespace popdist::cli {

/// Connects to `address`:`port` (IPv4 or IPv6) and closes again, retrying a refusal until
/// `deadline`; "" on success, else why not ("connect: Network is unreachable", "no answer within
/// 2000 ms", "address 'x': Name or service not known").
[[nodiscard]] std::string connect_back(const std::string& address, int port,
                                       std::chrono::steady_clock::time_point deadline);

}  // namespace popdist::cli
