#pragma once
// The channel of one attempt, from popdist run's side: opening it (a new job key by the route
// channel/job_key.hpp describes, a server, the variables that tell the agents where it is and how
// to find the key) and, after mpirun ended, the short wait for the
// agents' last messages. Every message goes into the attempt's JobRecords.

#include <cstddef>
#include <memory>
#include <string>

#include "channel/server.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/plan/channel_address.hpp"
#include "run/supervise/job_records.hpp"

namespace popdist::cli {

/// For --dry-run: the variables that tell the agents where the channel is and how to find its key,
/// by the route POPDIST_CHANNEL_KEY_ROUTE chooses -- the job's nonce and the key's id (file route)
/// or the key by name only (environment route) -- with "<nonce>", "<key id>" and `port` ("<port>")
/// standing for what is made at run time.
void add_channel_variables(MpirunContext& context, const ChannelAddress& address, const std::string& port);

/// The attempt's channel (tools/channel): a new job key (from the user's key file and a new nonce;
/// the environment route when asked for, or when the key file cannot be used here: said once, under
/// `verbose` only when asked for), a server, and the variables of add_channel_variables with their
/// values. nullptr, after a warning, when it cannot listen: the job runs, its agents report nothing.
[[nodiscard]] std::unique_ptr<channel::Server> open_channel(const ChannelAddress& address, std::size_t num_hosts,
                                                            JobRecords& records, MpirunContext& context,
                                                            bool verbose = false);

/// After mpirun ended: the agents' last messages may still be on their way (a relay, the server's
/// thread); waits a moment for every instance that said it started to say how it ended.
void settle(const JobRecords& records);

}  // namespace popdist::cli
