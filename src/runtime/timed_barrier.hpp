#pragma once
// synchronize() with a timeout: a point-to-point protocol on the control communicator that never
// enters a blocking collective, so the whole call is bounded (DESIGN.md 5).

namespace popdist::detail {

struct Entry;

/// Waits until every member of `entry` has arrived, or `seconds` have passed. Throws
/// TimeoutError naming the members that did not arrive (the set is then abandoned), or, for a
/// member that arrives after others gave up, naming those that gave up.
void timed_barrier(Entry& entry, double seconds);

}  // namespace popdist::detail
