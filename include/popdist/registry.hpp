#pragma once
/// @file registry.hpp
/// Communicators over subsets of instances, synchronize and execute_on_instances (design.md §5).
/// Everything here needs init().

#include <mpi.h>

#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "popdist/caller.hpp"
#include "popdist/grouping.hpp"

namespace popdist {

/// A set of instance indices.
using InstanceSet = std::set<int>;

/// A timeout in seconds (fractions allowed).
using Seconds = std::chrono::duration<double>;

/// Registers (creates and caches) a communicator over `participants`. An empty id names the set
/// by its members. Only members take part in MPI; non-members return at once. Registering the
/// same set again costs no MPI call. Throws UsageError for out-of-range participants, an empty
/// set, or an id already naming another set.
///
/// Before creating, the members exchange what they are creating: every member of a set must
/// register it, and two instances must register the sets they share in the same order (sets
/// that share no pair of instances may be registered in any order). A violation -- another
/// member creating a different set, or the same set under a different non-empty id -- throws
/// UsageError on every instance of both sets, naming them, instead of hanging; those sets then
/// keep failing with that error. The set of all instances registered explicitly is a
/// communicator of its own, distinct from the root scope's.
///
/// Bounded by `timeout`, else by POPDIST_SYNC_TIMEOUT when set: a member that has not registered
/// the set by then is named in a TimeoutError on every member that waited for it (and a member
/// that comes later fails too); the set then cannot be created in this job.
void register_communicator(const InstanceSet& participants, const std::string& communicator_id = "",
                           std::optional<Seconds> timeout = std::nullopt);

/// A barrier. No arguments: over the current scope (all instances, or the set of the enclosing
/// execute_on_instances). With an id or a participant set: over that set, created on first use.
/// Non-members return at once. Without a timeout it is one MPI_Barrier.
///
/// With a timeout (argument, else POPDIST_SYNC_TIMEOUT as read by init()) the whole call is
/// bounded: a point-to-point protocol that never enters a collective nor creates a communicator.
/// A TimeoutError names the instances that did not arrive; a member that arrives after others
/// gave up gets a TimeoutError naming them. The set is then abandoned: any later use of it
/// throws UsageError saying so. Arrivals within microseconds of a deadline may still succeed on
/// one side and time out on the other (any timeout has that race); the side that succeeded
/// learns it at its next timed synchronize over the set.
void synchronize(const std::string& communicator_id = "", const InstanceSet& participants = {},
                 std::optional<Seconds> timeout = std::nullopt);

/// Describes a failure of execute_on_instances' function for the other members.
struct FailureInfo {
  std::string type;
  std::string message;
};
using FailureDescriber = std::function<FailureInfo(std::exception_ptr)>;

/// Runs `body` on members of `instances` only, with collectives inside it scoped to that set.
/// If body throws on any member, every member throws: the failing one its own exception, the
/// others RemoteExecutionError naming the lowest failed instance, the type and the message.
/// (The outcome is agreed after body returns: a body that waits in a collective that a failed
/// member never reaches still waits -- give such collectives a timeout.)
/// `describe` turns the exception into FailureInfo (default: demangled type and what()).
/// Returns true on members.
bool execute_on_instances(const InstanceSet& instances, const std::function<void()>& body,
                          const FailureDescriber& describe = {});

/// Typed convenience: returns func's result on members and std::nullopt elsewhere
/// (for a void func: true on members).
template <class F>
auto execute_on_instances(const InstanceSet& instances, F&& func) {
  using R = std::invoke_result_t<F&>;
  if constexpr (std::is_void_v<R>) {
    return execute_on_instances(instances, std::function<void()>(std::forward<F>(func)), FailureDescriber{});
  } else {
    std::optional<R> result;
    execute_on_instances(instances, std::function<void()>([&] { result.emplace(func()); }), FailureDescriber{});
    return result;
  }
}

/// The set that a bare synchronize() uses on this thread: all instances, or the set of the
/// innermost enclosing execute_on_instances.
[[nodiscard]] InstanceSet current_scope();

/// The MPI communicator popdist owns for a set (created on first use), for interop with other
/// MPI code (e.g. mpi4py). Empty arguments mean the current scope. MPI_COMM_NULL on non-members.
/// The handle stays owned by popdist: do not free it.
[[nodiscard]] MPI_Comm native_communicator(const std::string& communicator_id = "",
                                           const InstanceSet& participants = {});

/// The default FailureDescriber: the demangled dynamic type and what(); for an exception not
/// derived from std::exception, its type (when known) and "unknown exception".
[[nodiscard]] FailureInfo describe_exception(std::exception_ptr failure);

/// Registers one communicator per group of `grouping` (over the instances hosting the group).
/// Returns group -> communicator id for the groups this instance hosts.
std::map<int, std::string> register_grouping_communicators(const ReplicaGrouping& grouping);

}  // namespace popdist

namespace popdist::detail {

/// The calls above, for another language's bindings: `caller` names the call and the
/// registration call in that language's API, in every error they raise (caller.hpp).
void register_communicator(const InstanceSet& participants, const std::string& communicator_id,
                           std::optional<Seconds> timeout, const Caller& caller);
void synchronize(const std::string& communicator_id, const InstanceSet& participants, std::optional<Seconds> timeout,
                 const Caller& caller);
bool execute_on_instances(const InstanceSet& instances, const std::function<void()>& body,
                          const FailureDescriber& describe, const Caller& caller);
[[nodiscard]] MPI_Comm native_communicator(const std::string& communicator_id, const InstanceSet& participants,
                                           const Caller& caller);
std::map<int, std::string> register_grouping_communicators(const ReplicaGrouping& grouping, const Caller& caller);

}  // namespace popdist::detail
