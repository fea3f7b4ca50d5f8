// synchronize() (design.md §5.2): the one pipeline every front end ends in -- C++ callers, and the
// Python binding (bindings/src/mpi_module.cpp) -- from the arguments to the barrier. The set to
// wait on is the current scope (no id, no participants) or the set they name; how to wait is the
// set's own BarrierStrategy, chosen when the set was made (entry.hpp). Nothing else decides it.
#include "popdist/registry.hpp"

#include <mpi.h>

#include "mpi/deadline.hpp"
#include "mpi/mpi_call.hpp"
#include "protocols/host_barrier/host_barrier.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/synchronize_guard.hpp"
#include "protocols/timed/timed_barrier.hpp"
#include "registry/entry.hpp"
#include "registry/lookup.hpp"
#include "registry/registry.hpp"
#include "registry/scope.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist {
namespace {

using detail::BarrierStrategy;
using detail::Entry;

// The first synchronize over a set this instance is a member of creates its communicator
// (collective over the members: the handshake, then MPI_Comm_create_group). Out of line: once.
[[gnu::noinline]] void create_for_synchronize(Entry& entry, const detail::Caller& caller) {
  detail::registry().ensure_created(entry, std::nullopt, caller);
}

// The barrier over `entry`, by its strategy; with a timeout, its timed form. Inline in
// synchronize(): the untimed paths are one membership test, one switch and the wait itself
// (the host barrier on one host, cheaper than MPI_Barrier there; exactly one MPI_Barrier on a
// communicator; tests/bench/README.md compares both with a raw MPI_Barrier).
inline void wait_on(Entry& entry, const std::optional<Seconds>& timeout, const detail::Caller& caller) {
  if (!entry.is_member) return;  // documented policy: non-members return at once
  if (timeout) {
    detail::timed_barrier(entry, timeout->count());
    return;
  }
  switch (entry.strategy) {
    case BarrierStrategy::Host: {
      if (entry.abandoned.load(std::memory_order_relaxed)) detail::throw_abandoned(entry, "synchronize");
      const detail::UntimedTurn in_turn(entry.synchronize_turn);
      entry.host_barrier->wait();
      return;
    }
    case BarrierStrategy::Communicator: {
      if (!entry.created.load(std::memory_order_acquire)) create_for_synchronize(entry, caller);
      if (entry.abandoned.load(std::memory_order_relaxed)) detail::throw_abandoned(entry, "synchronize");
      const detail::UntimedTurn in_turn(entry.synchronize_turn);
      detail::interruptible_barrier(entry.comm, "MPI_Barrier");  // MPI_Barrier from C++
      return;
    }
    case BarrierStrategy::Timed:
      detail::timed_barrier(entry, entry.default_timeout);
      return;
  }
}

// Both front ends' synchronize, inlined into each: `caller` only words errors (caller.hpp).
inline void synchronize_as(const std::string& communicator_id, const InstanceSet& participants,
                           std::optional<Seconds> timeout, const detail::Caller& caller) {
  if (!detail::g_hot.initialized.load(std::memory_order_acquire)) detail::throw_not_initialized(caller.name);
  if (timeout) detail::check_timeout_argument(timeout->count());
  // The current scope without a call, a lookup or an allocation; a named set through the
  // per-thread lookup cache (lookup.hpp).
  Entry& entry = communicator_id.empty() && participants.empty()
                     ? *detail::current_entry()
                     : detail::barrier_entry(detail::lookup_entry(communicator_id, participants, caller));
  wait_on(entry, timeout, caller);
}

}  // namespace

void synchronize(const std::string& communicator_id, const InstanceSet& participants, std::optional<Seconds> timeout) {
  synchronize_as(communicator_id, participants, timeout, "synchronize");
}

void detail::synchronize(const std::string& communicator_id, const InstanceSet& participants,
                         std::optional<Seconds> timeout, const Caller& caller) {
  synchronize_as(communicator_id, participants, timeout, caller);
}

}  // namespace popdist
