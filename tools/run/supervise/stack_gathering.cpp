#include "run/supervise/stack_gathering.hpp"

#include <mutex>

namespace popdist::cli {
namespace {

// What an agent's answer takes to travel after its own wait (a relay, the network).
constexpr auto kTravel = std::chrono::milliseconds(1500);

InstanceStacks stacks_of(const InstanceRecord& record) {
  InstanceStacks stacks;
  stacks.index = record.index;
  stacks.marker.host = record.host;
  const auto& dump = record.stack_dump;
  if (!dump) {
    stacks.state = record.status ? InstanceStacks::State::ended : InstanceStacks::State::no_answer;
    return stacks;
  }
  stacks.marker.pid = static_cast<long>(dump->pid);
  stacks.marker.main_thread = dump->main_thread;
  if (dump->pid == 0) return stacks;  // no_hook
  stacks.threads = parse_faulthandler_dump(dump->text);
  stacks.state = stacks.threads.empty() ? InstanceStacks::State::no_answer : InstanceStacks::State::answered;
  return stacks;
}

}  // namespace

std::vector<InstanceStacks> stacks_from_records(const std::vector<InstanceRecord>& records) {
  std::vector<InstanceStacks> stacks;
  stacks.reserve(records.size());
  for (const auto& record : records) stacks.push_back(stacks_of(record));
  return stacks;
}

std::string gather_stack_report(channel::Server& server, JobRecords& records, std::chrono::milliseconds wait,
                                const std::string& job) {
  static std::mutex one_at_a_time;  // the stall watch and `popdist stacks` may ask at once
  std::lock_guard lock(one_at_a_time);
  records.forget_stack_dumps();
  server.request_stacks(channel::kAllInstances, wait);
  records.wait_for_stack_dumps(std::chrono::steady_clock::now() + wait + kTravel);
  return format_stack_report(job, stacks_from_records(records.snapshot()), wait);
}

}  // namespace popdist::cli
