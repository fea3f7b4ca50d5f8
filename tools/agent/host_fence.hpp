#pragma once
// The agent's fence (issue 48): an agent that has not heard `popdist run` -- its beat down,
// passed on by the host's relay (channel/liveness.hpp) -- for --host-timeout ends its program as
// a teardown would: SIGTERM, the grace period, SIGKILL. A host cut off from the job then neither
// keeps its devices nor races a restarted job elsewhere (two instance 0s writing one checkpoint),
// as torchrun's agents end their workers when the rendezvous keep-alive fails. popdist run has
// by then found the host lost (exit 122, the host named); the fenced end need not reach it.
//
// What never fences: a busy or stopped program (the beat is read by the agent's channel thread,
// not the program); a relay's election (the count is from the last beat heard, and an election
// takes milliseconds); an agent stopped itself (SIGSTOP, a suspended machine) -- the watch
// counts anew from its resumption, so popdist run's next beat can arrive; popdist run never
// heard (an unreachable channel is reported at the start, and the job runs unreported as
// before); --host-timeout 0.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "job/host_fence_settings.hpp"

namespace popdist::cli {

using SteadyClock = std::chrono::steady_clock;

/// How long popdist run has been silent when the agent must fence now; nothing while it may
/// still be heard. `last_heard`: nothing when popdist run was never heard; `counting_from`: when
/// the watch last resumed after the agent itself was stopped (the count starts no earlier). Pure.
[[nodiscard]] std::optional<std::chrono::milliseconds> fence_due(const FenceSettings& settings,
                                                                 std::optional<SteadyClock::time_point> last_heard,
                                                                 SteadyClock::time_point counting_from,
                                                                 SteadyClock::time_point now);

/// The line the fenced instance's output and log get (after "popdist run: "). Pure.
[[nodiscard]] std::string fence_message(int instance, const std::string& host, std::chrono::milliseconds silent,
                                        const FenceSettings& settings);

/// The watch over one program: a thread that looks every tick at when popdist run was last heard.
class HostFence {
 public:
  using Heard = std::function<std::optional<SteadyClock::time_point>()>;

  /// Does nothing unless settings.on(). `heard` is called from the watch's thread, and so is
  /// `fencing` (when given) as the fence begins.
  HostFence(FenceSettings settings, int instance, std::string host, Heard heard, std::function<void()> fencing = {});
  /// Stops the watch (after a fence: once the fence is done).
  ~HostFence();
  HostFence(const HostFence&) = delete;
  HostFence& operator=(const HostFence&) = delete;

  /// Starts watching `program` (the agent's child); the fence's line also goes to `log_fd` (-1: none).
  void watch(pid_t program, int log_fd);
  /// The program has ended and is not yet reaped: from here on no signal of the fence reaches
  /// its pid (which could be another process's once reaped).
  void program_ended();
  /// Whether the program was fenced.
  [[nodiscard]] bool fenced() const;

 private:
  void run();
  void fence(std::chrono::milliseconds silent);
  void signal_program(int signal_number);
  void tell(const std::string& message) const;

  FenceSettings settings_;
  int instance_;
  std::string host_;
  Heard heard_;
  std::function<void()> fencing_;
  pid_t program_ = 0;
  int log_fd_ = -1;
  mutable std::mutex mutex_;  // ended_, stopping_, fenced_
  std::condition_variable changed_;
  bool ended_ = false;
  bool stopping_ = false;
  bool fenced_ = false;
  std::thread thread_;
};

/// The host the agent's channel is elected under: POPDIST_CHANNEL_HOST (fake hosts), else the machine's name.
[[nodiscard]] std::string fence_host_name();

/// Waits for the program `pid` to end, tells `fence` before reaping it (its pid stays the
/// program's until then, so the fence never signals a reused pid), and reaps it; its wait status.
int wait_for_program(pid_t pid, HostFence& fence);

}  // namespace popdist::cli
