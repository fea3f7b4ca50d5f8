#include "run/supervise/job_records.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace popdist::cli {
namespace {

SteadyTime minus_age(SteadyTime arrived, std::uint64_t age_ns) {
  // An age longer than this process has run (a hostile or broken peer) is clamped, not wrapped.
  const auto age = std::chrono::nanoseconds(static_cast<std::int64_t>(std::min<std::uint64_t>(age_ns, 1ull << 62)));
  const auto since_epoch = arrived.time_since_epoch();
  return age >= since_epoch ? SteadyTime{} : arrived - std::chrono::duration_cast<SteadyTime::duration>(age);
}

std::optional<std::int32_t> instance_of(const channel::Message& message) {
  return std::visit(
      [](const auto& m) -> std::optional<std::int32_t> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, channel::Hello> || std::is_same_v<T, channel::Welcome> ||
                      std::is_same_v<T, channel::Proof>) {
          return std::nullopt;
        } else {
          return m.instance;
        }
      },
      message);
}

}  // namespace

JobRecords::JobRecords(int num_instances) : records_(static_cast<std::size_t>(std::max(num_instances, 0))) {
  for (std::size_t i = 0; i < records_.size(); ++i) records_[i].index = static_cast<int>(i);
}

void JobRecords::on_delivery(const channel::Delivery& delivery) {
  {
    std::lock_guard lock(mutex_);
    auto& heard = heard_[delivery.host];
    heard = std::max(heard, delivery.arrived);
  }
  const auto instance = instance_of(delivery.message);
  if (!instance || *instance < 0 || static_cast<std::size_t>(*instance) >= records_.size()) return;
  {
    std::lock_guard lock(mutex_);
    auto& record = records_[static_cast<std::size_t>(*instance)];
    // The first Ended wins: a later one is the same end sent again through the host's next relay
    // (its age counted anew), or a lie; neither rewrites what was recorded.
    if (record.status && std::holds_alternative<channel::Ended>(delivery.message)) return;
    record.host = delivery.host;
    if (const auto* started = std::get_if<channel::Started>(&delivery.message)) {
      record.started = true;
      record.pid = started->pid;
      record.last_output = std::max(record.last_output.value_or(SteadyTime{}), delivery.arrived);
    } else if (const auto* ended = std::get_if<channel::Ended>(&delivery.message)) {
      record.status = ended->status;
      record.ended_at = minus_age(delivery.arrived, ended->age_ns);
      record.error_text = ended->error_text;
      record.error_from_torch_file = ended->error_source == channel::ErrorSource::kTorchErrorFile;
    } else if (const auto* activity = std::get_if<channel::Activity>(&delivery.message)) {
      record.last_output = std::max(record.last_output.value_or(SteadyTime{}),
                                    minus_age(delivery.arrived, activity->age_ns));
    } else if (const auto* dump = std::get_if<channel::StackDump>(&delivery.message)) {
      record.stack_dump = *dump;
    }
  }
  changed_.notify_all();
}

std::vector<InstanceRecord> JobRecords::snapshot() const {
  std::lock_guard lock(mutex_);
  return records_;
}

std::optional<SteadyTime> JobRecords::last_output() const {
  std::lock_guard lock(mutex_);
  std::optional<SteadyTime> newest;
  for (const auto& record : records_) {
    if (record.last_output && (!newest || *record.last_output > *newest)) newest = record.last_output;
  }
  return newest;
}

std::map<std::string, SteadyTime> JobRecords::last_heard() const {
  std::lock_guard lock(mutex_);
  return heard_;
}

void JobRecords::forget_stack_dumps() {
  std::lock_guard lock(mutex_);
  for (auto& record : records_) record.stack_dump.reset();
}

bool JobRecords::all_dumped() const {
  return std::all_of(records_.begin(), records_.end(), [](const InstanceRecord& record) {
    return !record.started || record.status || record.stack_dump;
  });
}

void JobRecords::wait_for_stack_dumps(SteadyTime deadline) const {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline, [this] { return all_dumped(); });
}

}  // namespace popdist::cli
