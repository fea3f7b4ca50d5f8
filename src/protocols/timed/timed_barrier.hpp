#pragma once
// synchronize() with a timeout: a point-to-point protocol on the control communicator that never
// enters a blocking collective, so the whole call is bounded (design.md §5.3).

namespace popdist::detail {

struct ProtocolSet;

/// Waits until every member of `entry` has arrived, or `seconds` have passed. Throws
/// TimeoutError naming the members that did not arrive (the set is then abandoned), or, for a
/// member that arrives after others gave up, naming those that gave up.
void timed_barrier(ProtocolSet& entry, double seconds);

/// Cancels the GAVE_UP receive a set's timed rounds leave posted (finalize; `mpi_usable`: MPI is
/// initialized and not finalized, else there is nothing to cancel). Never throws.
void cancel_timed_receives(ProtocolSet& entry, bool mpi_usable) noexcept;

}  // namespace popdist::detail
