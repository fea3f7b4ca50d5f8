#include "run/supervise/job_channel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "channel/client.hpp"  // kAddressVariable
#include "channel/secret.hpp"
#include "common/say.hpp"

namespace popdist::cli {

void add_channel_variables(MpirunContext& context, const ChannelAddress& address, const std::string& port) {
  context.forwarded.emplace_back(channel::kSecretVariable);
  context.exports.emplace_back(channel::kAddressVariable, fmt::format("{}:{}", address.address, port));
}

std::unique_ptr<channel::Server> open_channel(const ChannelAddress& address, std::size_t num_hosts,
                                              JobRecords& records, MpirunContext& context) {
  try {
    const auto secret = channel::make_secret();
    channel::ServerOptions options;
    options.address = address.loopback ? "127.0.0.1" : "";
    options.secret = secret;
    options.max_unauthenticated = std::max<std::size_t>(options.max_unauthenticated, num_hosts);
    options.beat_interval = channel::beat_interval_from_environment(channel::process_environment());  // the beat down
    channel::ServerCallbacks callbacks;
    callbacks.on_message = [&records](channel::Delivery delivery) { records.on_delivery(delivery); };
    callbacks.on_error = [](const std::string& line) { say(line); };
    auto server = std::make_unique<channel::Server>(std::move(options), std::move(callbacks));
    ::setenv(channel::kSecretVariable, secret.c_str(), 1);
    add_channel_variables(context, address, std::to_string(server->port()));
    return server;
  } catch (const std::exception& e) {
    say(fmt::format("cannot open the job's channel ({}): the job runs, but no failure report, stack report or "
                    "stall watch from its instances", e.what()));
    return nullptr;
  }
}

void settle(const JobRecords& records) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    const auto all = records.snapshot();
    const bool ended = std::all_of(all.begin(), all.end(), [](const InstanceRecord& r) { return !r.started || r.status; });
    if (ended || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace popdist::cli
