#include "run/supervise/hung_teardown.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "run/supervise/unreaped_children.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;

int lowest_failure(const std::vector<UnreapedChild>& children) {
  int lowest = 0;
  for (const auto& child : children) {
    if (child.exit_status != 0 && (lowest == 0 || child.exit_status < lowest)) lowest = child.exit_status;
  }
  return lowest;
}

/// The watch's state: since when each of mpirun's ended children has been seen unreaped.
class HungTeardown {
 public:
  HungTeardown(std::chrono::milliseconds limit, std::function<std::optional<int>()> first_failure, std::string program)
      : limit_(limit), first_failure_(std::move(first_failure)), program_(std::move(program)) {}

  std::optional<WatchVerdict> operator()(pid_t mpirun) {
    const auto children = unreaped_children(mpirun);
    if (!stuck(children)) return std::nullopt;
    const auto recorded = first_failure_ ? first_failure_() : std::nullopt;
    const int status = recorded ? *recorded : lowest_failure(children);
    std::fputs(fmt::format("popdist run: {} has left processes it started unreaped for {:.0f} s after they ended: it "
                           "hangs in its own teardown; ending it (exit status {}, {})\n",
                           program_, std::chrono::duration<double>(limit_).count(), status,
                           recorded ? "the first instance to fail ended so" : "the lowest of its ended processes'")
                   .c_str(),
               stderr);
    std::fflush(stderr);
    return WatchVerdict{status, WatchVerdict::Ending::sigkill, {}, {}};
  }

 private:
  /// Notes when each child was first seen unreaped; true when one has been for the limit.
  bool stuck(const std::vector<UnreapedChild>& children) {
    const auto now = Clock::now();
    std::map<pid_t, Clock::time_point> still;
    bool stuck = false;
    for (const auto& child : children) {
      const auto seen = unreaped_since_.find(child.pid);
      const auto since = seen != unreaped_since_.end() ? seen->second : now;
      still[child.pid] = since;
      stuck = stuck || now - since >= limit_;
    }
    unreaped_since_ = std::move(still);
    return stuck;
  }

  std::chrono::milliseconds limit_;
  std::function<std::optional<int>()> first_failure_;
  std::string program_;
  std::map<pid_t, Clock::time_point> unreaped_since_;
};

}  // namespace

Watch hung_teardown_watch(std::chrono::milliseconds limit, std::function<std::optional<int>()> first_failure,
                          std::string program) {
  return HungTeardown(limit, std::move(first_failure), std::move(program));
}

}  // namespace popdist::cli
