#pragma once
// The agent's end of the job's channel (tools/channel): what it tells `popdist run` about its
// instance -- its start, its output (for the stall watch, at most once a second), how it ended
// (status, time as an age, torch's error file or the stderr tail) -- and its program's stacks when
// popdist run asks. Connecting runs on a thread of its own, so the program starts at once and an
// unreachable channel costs it nothing: one warning, and the program runs unreported (its end waits
// at most a second for the channel). Without the channel's variables (an agent started by hand, an
// older popdist run) it does nothing.

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

namespace popdist::cli {

class AgentChannel {
 public:
  /// Reads the channel's variables and takes them out of the environment (the program never
  /// sees the job's key, its nonce or its tag), then connects in the background. `job_dir`:
  /// where the program's start-up hook writes its stacks on this host (empty: none).
  AgentChannel(int instance, std::string job_dir);
  ~AgentChannel();
  AgentChannel(const AgentChannel&) = delete;
  AgentChannel& operator=(const AgentChannel&) = delete;

  void started(pid_t pid);
  /// The program wrote output: an Activity, at most once a second.
  void wrote();
  /// How the program ended (a shell status) and when, with its torch error file's traceback when
  /// it wrote one, else `stderr_tail`; then closes (a relay lingers for its host's other agents).
  void ended(int status, std::chrono::steady_clock::time_point ended_at, const std::string& stderr_tail);

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;  // shared with its threads (agent_channel.cpp)
};

}  // namespace popdist::cli
