#pragma once
// What the agents of one attempt said over the job's channel (tools/channel), per instance: its
// host, pid, end (status, time, error text), last output and last stack dump. One table with one
// owner (popdist run) under one lock: the channel's thread writes it, the supervision, the failure
// report and the stack report read it. The same path for every host, the launching one included.
// Times are on popdist run's steady clock (a message's arrival minus the age it carries), so no
// two hosts' clocks are ever compared.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "channel/server.hpp"

namespace popdist::cli {

using SteadyTime = std::chrono::steady_clock::time_point;

/// One instance, as its agent told it.
struct InstanceRecord {
  int index = 0;
  std::string host;                  ///< the host whose relay spoke for it; empty until it spoke
  long long pid = 0;                 ///< the program's, from Started
  bool started = false;
  std::optional<int> status;         ///< set when it ended: as a shell reports it
  SteadyTime ended_at{};             ///< arrival - age
  std::string error_text;            ///< its torch error file's traceback, else its stderr tail
  bool error_from_torch_file = false;
  std::optional<SteadyTime> last_output;
  std::optional<channel::StackDump> stack_dump;  ///< its answer to the last Request
};

class JobRecords {
 public:
  explicit JobRecords(int num_instances);

  /// The server's on_message: a message for an instance outside 0..num_instances-1 is dropped;
  /// an instance's first Ended is its end (a later one, resent or not, changes nothing).
  void on_delivery(const channel::Delivery& delivery);

  [[nodiscard]] std::vector<InstanceRecord> snapshot() const;
  /// The newest output of any instance (a start counts), nullopt before any.
  [[nodiscard]] std::optional<SteadyTime> last_output() const;

  /// When each host (as its relay names itself) was last heard from: any message, a Beat included.
  [[nodiscard]] std::map<std::string, SteadyTime> last_heard() const;

  /// Forgets every stack dump, before a new Request.
  void forget_stack_dumps();
  /// Waits until every started instance that has not ended answered, or until `deadline`.
  void wait_for_stack_dumps(SteadyTime deadline) const;

 private:
  [[nodiscard]] bool all_dumped() const;  // with mutex_ held

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<InstanceRecord> records_;
  std::map<std::string, SteadyTime> heard_;  // by channel host
};

}  // namespace popdist::cli
