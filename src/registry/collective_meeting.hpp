#pragma once
// popdist's own collectives -- the byte collectives behind popdist.torch and popdist.lightning,
// PopDist's host collectives, execute_on_instances' agreement on the outcome -- under
// synchronize's timeout rule (design.md §11.4): the caller's timeout, else POPDIST_SYNC_TIMEOUT,
// else none, and then a plain MPI collective as before. With one, the members first meet in the
// set's timed barrier, but apart from its synchronize (Entry::collectives: other tags), so that a
// collective on one instance and a synchronize on another never complete each other and send one
// of them on into a collective the other never enters: both fail instead, each naming both
// operations (waited_in.hpp), within their timeouts.

#include <optional>
#include <string>

#include "mpi/deadline.hpp"

namespace popdist::detail {

struct Entry;

/// The timeout of one of popdist's collectives: `given`, else POPDIST_SYNC_TIMEOUT, else none.
[[nodiscard]] std::optional<double> collective_timeout(std::optional<double> given);

/// The meeting itself: the timed barrier of `scope`'s collectives (Entry::collectives) within
/// `seconds`, described as `operation`; throws as timed_barrier does (the caller adds context).
void meet_apart(Entry& scope, const std::string& operation, double seconds);

/// Meets the other members of `scope` (this instance is one) before the collective `operation`
/// ("popdist.torch.DistributedSampler (allgather of bytes)") that the public call `caller` makes
/// ("popdist.torch.DistributedSampler": errors start with it), within `seconds`; returns the
/// deadline of the collective that follows: what is left of the timeout, but at least
/// min(timeout, 1 s) (once everyone met, it takes microseconds). No timeout: no meeting and an
/// unbounded deadline. Throws TimeoutError naming the members that did not come, UsageError when
/// one is in another popdist operation over the set.
Deadline meet_for_collective(Entry& scope, const std::string& caller, const std::string& operation,
                             std::optional<double> seconds);

/// Waits for a collective started after meet_for_collective; past the deadline, TimeoutError:
/// every member met, but not all entered `function` (another call, or an exit, in between).
void finish_collective(MPI_Request* requests, int count, const Deadline& deadline, const std::string& caller,
                       const char* function);

}  // namespace popdist::detail
