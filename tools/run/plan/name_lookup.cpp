#include "run/plan/name_lookup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace popdist::cli {
namespace {

// What the caller and the lookup threads share; the last of them to let go frees it, so a thread
// that answers after the deadline writes into live memory that nobody reads any more.
struct Answers {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::optional<std::optional<std::string>>> answers;  // outer: answered yet
  std::size_t answered = 0;
};

// Signals stay with the threads that expect them: the lookup threads are made with all blocked.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous_);
  }
  ~AllSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

void start_lookup(const std::shared_ptr<Answers>& shared, std::size_t index, std::string name, ResolveIpv4 resolve) {
  try {
    std::thread([shared, index, name = std::move(name), resolve] {
      auto address = resolve(name);
      {
        std::lock_guard lock(shared->mutex);
        shared->answers[index] = std::move(address);
        ++shared->answered;
      }
      shared->changed.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    // No thread to be had: this name goes without an answer, as a lookup that never returns.
  }
}

}  // namespace

std::vector<NameLookup> look_up_within(const std::vector<std::string>& names, ResolveIpv4 resolve,
                                       std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  auto shared = std::make_shared<Answers>();
  shared->answers.resize(names.size());
  {
    const AllSignalsBlocked blocked;
    for (std::size_t i = 0; i < names.size(); ++i) start_lookup(shared, i, names[i], resolve);
  }
  std::vector<NameLookup> lookups;
  std::unique_lock lock(shared->mutex);
  shared->changed.wait_until(lock, until, [&] { return shared->answered == names.size(); });
  for (std::size_t i = 0; i < names.size(); ++i) {
    NameLookup lookup{names[i], NameLookup::Outcome::kNoAnswer, {}};
    if (const auto& answer = shared->answers[i]) {
      lookup.outcome = *answer ? NameLookup::Outcome::kResolved : NameLookup::Outcome::kUnresolved;
      lookup.address = answer->value_or("");
    }
    lookups.push_back(std::move(lookup));
  }
  return lookups;
}

std::string describe_lookups(const std::vector<NameLookup>& lookups, std::chrono::milliseconds deadline) {
  std::vector<std::string> resolved;
  std::vector<std::string> unresolved;
  std::vector<std::string> unanswered;
  for (const auto& lookup : lookups) {
    switch (lookup.outcome) {
      case NameLookup::Outcome::kResolved: resolved.push_back(lookup.name + " " + lookup.address); break;
      case NameLookup::Outcome::kUnresolved: unresolved.push_back(lookup.name); break;
      case NameLookup::Outcome::kNoAnswer: unanswered.push_back(lookup.name); break;
    }
  }
  std::vector<std::string> parts;
  if (!resolved.empty()) parts.push_back(fmt::format("{}", fmt::join(resolved, ", ")));
  if (!unresolved.empty())
    parts.push_back(fmt::format("{} {} not resolve", fmt::join(unresolved, ", "), unresolved.size() == 1 ? "does" : "do"));
  if (!unanswered.empty())
    parts.push_back(fmt::format("{} did not answer within {} ms", fmt::join(unanswered, ", "), deadline.count()));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace popdist::cli
