#pragma once
// The channel of one attempt, from popdist run's side: opening it (a new secret, a server, the
// variables that tell the agents where it is) and, after mpirun ended, the short wait for the
// agents' last messages. Every message goes into the attempt's JobRecords.

#include <cstddef>
#include <memory>
#include <string>

#include "channel/server.hpp"
#include "run/mpirun/mpirun_command.hpp"
#include "run/plan/channel_address.hpp"
#include "run/supervise/job_records.hpp"

namespace popdist::cli {

/// The two variables that tell the agents where the channel is: the secret by name only (its value
/// stays off every command line) and `address`:`port`; --dry-run passes "<port>", made at run time.
void add_channel_variables(MpirunContext& context, const ChannelAddress& address, const std::string& port);

/// The attempt's channel (tools/channel): a new secret, a server, and the two variables that tell
/// the agents where it is -- the secret exported by name only (its value stays off every command
/// line). nullptr, after a warning, when it cannot listen: the job runs, its agents report nothing.
[[nodiscard]] std::unique_ptr<channel::Server> open_channel(const ChannelAddress& address, std::size_t num_hosts,
                                                            JobRecords& records, MpirunContext& context);

/// After mpirun ended: the agents' last messages may still be on their way (a relay, the server's
/// thread); waits a moment for every instance that said it started to say how it ended.
void settle(const JobRecords& records);

}  // namespace popdist::cli
