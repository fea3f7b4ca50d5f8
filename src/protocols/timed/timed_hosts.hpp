#pragma once
// A timed synchronize over all instances of a job across hosts: the host barrier's shape (inside
// a host in shared memory, then the hosts' leaders over MPI), with deadlines (timed_hosts.cpp).

#include <mpi.h>

#include "mpi/clock.hpp"

namespace popdist::detail {

struct ProtocolSet;
class HostBarrier;

/// Waits until every instance has arrived, or `deadline` (`seconds` after `start`, on MPI's
/// clock). Throws as timed_barrier does. `host` spans hosts and uses its shared-memory segment.
void timed_across_hosts(ProtocolSet& entry, HostBarrier& host, double seconds, MpiClock::time_point start,
                        MpiClock::time_point deadline, int me, MPI_Comm control);

}  // namespace popdist::detail
