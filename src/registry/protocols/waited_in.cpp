#include "registry/protocols/waited_in.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "mpi/matched_receive.hpp"
#include "mpi/pending_sends.hpp"
#include "registry/entry.hpp"
#include "registry/instance_sets.hpp"

namespace popdist::detail {
namespace {

constexpr int kWaitedInTag = static_cast<int>(ControlTag::WaitedIn);

std::string shortened(std::string text) {
  if (text.size() > WaitedIn::kMaxText) {
    text.resize(WaitedIn::kMaxText - 3);
    text += "...";
  }
  return text;
}

}  // namespace

WaitedIn::WaitedIn(const Entry& entry, MPI_Comm control) : entry_(entry), control_(control) {
  const auto set = format_set(entry.members);
  const auto text = shortened(entry.name == set ? fmt::format("synchronize over {}", set)
                                                : fmt::format("synchronize over {} ('{}')", set, entry.name));
  mine_.resize(sizeof entry.hash + text.size());
  std::memcpy(mine_.data(), &entry.hash, sizeof entry.hash);
  std::memcpy(mine_.data() + sizeof entry.hash, text.data(), text.size());
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
    if (notice.size() < sizeof hash) continue;  // not ours to read
    std::memcpy(&hash, notice.data(), sizeof hash);
    const auto source = status.MPI_SOURCE;
    if (hash != entry_.hash) {
      heard_[source] = shortened(std::string(notice.begin() + sizeof hash, notice.end()));
    }
    tell({source});
  }
}

std::string WaitedIn::explain(const std::vector<int>& missing) const {
  std::vector<std::string> parts;
  for (const auto instance : missing) {
    if (const auto found = heard_.find(instance); found != heard_.end()) {
      parts.push_back(fmt::format("instance {} waited in {} instead", instance, found->second));
    }
  }
  if (parts.empty()) return {};
  return fmt::format(" ({}: the members named different sets, and only the same set meets)",
                     fmt::join(parts, "; "));
}

}  // namespace popdist::detail
