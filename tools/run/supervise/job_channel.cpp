#include "run/supervise/job_channel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "channel/client.hpp"  // kAddressVariable
#include "channel/job_key.hpp"
#include "channel/secret.hpp"
#include "common/say.hpp"

namespace popdist::cli {
namespace {

/// The job's key, and what of it the agents get (channel/job_key.hpp): the nonce always; the key's
/// id on the file route, the key itself (by name) on the environment route.
struct ChannelKey {
  std::string job_key;
  std::string nonce;
  std::string key_id;  // empty: the environment route
};

bool key_file_overridden() { return std::getenv(channel::kKeyFileVariable) != nullptr; }

void add_key_variables(MpirunContext& context, const std::string& nonce, const std::string& key_id) {
  context.forwarded.emplace_back(channel::kTagVariable);  // by name: other users cannot read it in `ps`
  context.exports.emplace_back(channel::kNonceVariable, nonce);
  if (key_id.empty()) {
    context.forwarded.emplace_back(channel::kSecretVariable);  // by name: its value on no command line
    return;
  }
  context.exports.emplace_back(channel::kKeyIdVariable, key_id);
  if (key_file_overridden()) context.forwarded.emplace_back(channel::kKeyFileVariable);
}

// Said once per popdist run, not once per attempt.
void say_once(std::atomic<bool>& said, const std::string& line) {
  if (!said.exchange(true)) say(line);
}

channel::KeyRoute route_asked() {
  static std::atomic<bool> said{false};
  try {
    return channel::key_route(channel::process_environment());
  } catch (const std::invalid_argument& e) {
    say_once(said, fmt::format("{}: the default, 'file', is used", e.what()));
    return channel::KeyRoute::kFile;
  }
}

// The file route unless the environment route is asked for, or the key file cannot be used here:
// then the environment route, said once (the job keeps its channel; the key then crosses the
// network in clear inside mpirun's launch message).
ChannelKey make_channel_key(bool verbose) {
  static std::atomic<bool> said{false};
  const auto environment = channel::process_environment();
  ChannelKey key{"", channel::make_job_nonce(), ""};
  if (route_asked() == channel::KeyRoute::kFile) {
    try {
      const std::string user_key = channel::load_or_make_user_key(channel::key_file_path(environment));
      key.job_key = channel::derive_job_key(user_key, key.nonce);
      key.key_id = channel::key_id(user_key);
      return key;
    } catch (const std::exception& e) {
      say_once(said, fmt::format("{}: the channel's key goes to the agents in mpirun's environment instead, in "
                                 "clear inside mpirun's launch message to remote hosts",
                                 e.what()));
    }
  } else if (verbose) {
    say_once(said, fmt::format("the channel's key goes to the agents in mpirun's environment ({}=environment): in "
                               "clear inside mpirun's launch message to remote hosts",
                               channel::kKeyRouteVariable));
  }
  key.job_key = channel::make_secret();
  return key;
}

}  // namespace

void add_channel_variables(MpirunContext& context, const ChannelAddress& address, const std::string& port) {
  // --dry-run: what would travel, with placeholders for what is made at run time.
  const bool file_route = route_asked() == channel::KeyRoute::kFile;
  add_key_variables(context, "<nonce>", file_route ? "<key id>" : "");
  context.exports.emplace_back(channel::kAddressVariable, fmt::format("{}:{}", address.address, port));
}

std::unique_ptr<channel::Server> open_channel(const ChannelAddress& address, std::size_t num_hosts,
                                              JobRecords& records, MpirunContext& context, bool verbose) {
  try {
    const ChannelKey key = make_channel_key(verbose);
    channel::ServerOptions options;
    options.address = address.loopback ? "127.0.0.1" : "";
    options.secret = key.job_key;
    options.max_unauthenticated = std::max<std::size_t>(options.max_unauthenticated, num_hosts);
    channel::ServerCallbacks callbacks;
    callbacks.on_message = [&records](channel::Delivery delivery) { records.on_delivery(delivery); };
    callbacks.on_error = [](const std::string& line) { say(line); };
    auto server = std::make_unique<channel::Server>(std::move(options), std::move(callbacks));
    if (key.key_id.empty()) ::setenv(channel::kSecretVariable, key.job_key.c_str(), 1);
    ::setenv(channel::kTagVariable, channel::make_job_tag().c_str(), 1);
    add_key_variables(context, key.nonce, key.key_id);
    context.exports.emplace_back(channel::kAddressVariable, fmt::format("{}:{}", address.address, server->port()));
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
