#include "registry/collective_meeting.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "mpi/clock.hpp"
#include "popdist/error.hpp"
#include "protocols/timed/timed_barrier.hpp"
#include "registry/entry.hpp"
#include "registry/registry.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {

std::optional<double> collective_timeout(std::optional<double> given) {
  return given ? given : runtime_state().default_timeout;
}

void meet_apart(Entry& scope, const std::string& operation, double seconds) {
  // One meeting per set at a time: `operation` describes this one in the notices.
  const std::lock_guard<std::mutex> turn(scope.collectives_turn);
  auto& meeting = registry().collectives_of(scope);
  meeting.operation = operation;
  timed_barrier(meeting, seconds);
}

Deadline meet_for_collective(Entry& scope, const std::string& caller, const std::string& operation,
                             std::optional<double> seconds) {
  if (!seconds) return {};
  const auto start = MpiClock::now();
  try {
    meet_apart(scope, operation, *seconds);
  } catch (const TimeoutError& error) {
    throw TimeoutError(fmt::format("{}: every instance must take part, but not all did within {} s (an instance that "
                                   "exited, failed or is late): {}",
                                   caller, *seconds, error.what()),
                       error.missing_instances());
  }
  const double spent = std::chrono::duration<double>(MpiClock::now() - start).count();
  return Deadline::after(std::max(*seconds - spent, std::min(*seconds, 1.0)));
}

void finish_collective(MPI_Request* requests, int count, const Deadline& deadline, const std::string& caller,
                       const char* function) {
  if (wait_all(requests, count, deadline, function)) return;
  throw TimeoutError(fmt::format("{}: every instance met, but not all entered the collective that follows ({}) in "
                                 "time: an instance made another popdist call (such as synchronize()) or exited "
                                 "instead; every instance must make the same calls in the same order",
                                 caller, function),
                     {});
}

}  // namespace popdist::detail
