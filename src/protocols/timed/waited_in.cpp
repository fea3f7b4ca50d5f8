#include "protocols/timed/waited_in.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "mpi/matched_receive.hpp"
#include "mpi/pending_sends.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/protocol_set.hpp"

namespace popdist::detail {
namespace {

constexpr int kWaitedInTag = static_cast<int>(ControlTag::WaitedIn);
/// A notice's entry hash and members' hash, before its text.
constexpr std::size_t kHeader = 2 * sizeof(std::uint64_t);

std::string shortened(std::string text) {
  if (text.size() > WaitedIn::kMaxText) {
    text.resize(WaitedIn::kMaxText - 3);
    text += "...";
  }
  return text;
}

}  // namespace

WaitedIn::WaitedIn(const ProtocolSet& entry, MPI_Comm control)
    : entry_(entry), control_(control), members_hash_(set_hash(entry.members)) {
  const auto set = format_set(entry.members);
  if (!entry.operation.empty()) {
    text_ = shortened(fmt::format("{} over {}", entry.operation, set));
  } else {
    text_ = shortened(entry.name == set ? fmt::format("synchronize over {}", set)
                                        : fmt::format("synchronize over {} ('{}')", set, entry.name));
  }
  mine_.resize(kHeader + text_.size());
  std::memcpy(mine_.data(), &entry.hash, sizeof entry.hash);
  std::memcpy(mine_.data() + sizeof entry.hash, &members_hash_, sizeof members_hash_);
  std::memcpy(mine_.data() + kHeader, text_.data(), text_.size());
}

void WaitedIn::tell(const std::vector<int>& members) {
  for (const auto member : members) {
    if (told_.insert(member).second) pending_sends().send(mine_, member, kWaitedInTag, control_);
  }
}

void WaitedIn::take() {
  MPI_Status status;
  std::vector<char> notice;
  while (take_message(kWaitedInTag, control_, notice, status)) {
    std::uint64_t hash = 0;
    std::uint64_t members = 0;
    if (notice.size() < kHeader) continue;  // not ours to read
    std::memcpy(&hash, notice.data(), sizeof hash);
    std::memcpy(&members, notice.data() + sizeof hash, sizeof members);
    const auto source = status.MPI_SOURCE;
    if (hash != entry_.hash) {
      heard_[source] = shortened(std::string(notice.begin() + kHeader, notice.end()));
      if (members == members_hash_) same_members_.insert(source);
    }
    tell({source});
  }
}

std::pair<int, std::string> WaitedIn::other_operation() const {
  if (same_members_.empty()) return {-1, {}};
  const auto instance = *same_members_.begin();
  return {instance, heard_.at(instance)};
}

std::string WaitedIn::explain(const std::vector<int>& missing) const {
  std::vector<std::string> sets;
  std::vector<std::string> operations;
  for (const auto instance : missing) {
    if (const auto found = heard_.find(instance); found != heard_.end()) {
      if (same_members_.count(instance) != 0) {
        operations.push_back(fmt::format("instance {} is in {} while this instance is in {}", instance, found->second, text_));
      } else {
        sets.push_back(fmt::format("instance {} waited in {} instead", instance, found->second));
      }
    }
  }
  std::string text;
  if (!operations.empty()) {
    text += fmt::format(" ({}: every instance must make the same popdist calls in the same order)",
                        fmt::join(operations, "; "));
  }
  if (!sets.empty()) {
    text += fmt::format(" ({}: the members named different sets, and only the same set meets)", fmt::join(sets, "; "));
  }
  return text;
}

}  // namespace popdist::detail
