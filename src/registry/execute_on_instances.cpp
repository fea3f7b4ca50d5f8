// execute_on_instances (design.md §5.4): run on members only, scoped, and agree on the outcome so
// that a failure on one member reaches every member and nobody is left waiting.
#include <cxxabi.h>

#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <typeinfo>
#include <vector>

#include "mpi/deadline.hpp"
#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "popdist/registry.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/timed/timed_barrier.hpp"
#include "registry/collective_meeting.hpp"
#include "registry/lookup.hpp"
#include "registry/registry.hpp"
#include "registry/scope.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist {
namespace {

using detail::Entry;

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(mangled);
}

FailureInfo default_describe(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& error) {
    return {demangle(typeid(error).name()), error.what()};
  } catch (...) {
    const auto* type = abi::__cxa_current_exception_type();
    return {type != nullptr ? demangle(type->name()) : std::string("unknown"), "unknown exception"};
  }
}

FailureInfo describe_safely(const FailureDescriber& describe, std::exception_ptr failure) {
  if (describe) {
    try {
      return describe(failure);
    } catch (...) {
      // A describer that fails must not leave the other members waiting: fall back.
    }
  }
  return default_describe(failure);
}

/// Every member learns whether any member failed, and which is the lowest that did, in one
/// MPI_Iallreduce (MIN of each member's position, or of the member count when it did not fail);
/// when one did, that member's error (type and message) reaches every member in two MPI_Ibcast
/// from it (lengths, then text). So the failure path costs what the success path does plus two
/// broadcasts: O(log k) messages per member, and bytes that do not grow with the set (gathering
/// every member's error, as before, sent 12 bytes per member and every text to everyone, while
/// the others only ever raise the lowest failed member's error).
///
/// With POPDIST_SYNC_TIMEOUT set, the members first meet in a timed synchronize, which names the
/// members that never finish the body (asleep, stuck in a collective the others left) in a
/// TimeoutError; every step of the agreement itself is then bounded by the same timeout.
void agree_on_outcome(Entry& entry, std::exception_ptr failure, const FailureDescriber& describe) {
  const auto timeout = detail::runtime_state().default_timeout;
  if (timeout) {
    try {
      // Apart from synchronize over the set (collective_meeting.hpp): a member in synchronize()
      // meanwhile is named, not met.
      detail::meet_apart(entry, "execute_on_instances (the agreement on the outcome)", *timeout);
    } catch (const TimeoutError& error) {
      // The error names the call the user made (over all instances the members meet in the root
      // scope's barrier, whose own message says "synchronize").
      throw TimeoutError(fmt::format("execute_on_instances over {}: the members did not all finish the function "
                                     "within {} s (POPDIST_SYNC_TIMEOUT): {}",
                                     detail::format_set(entry.members), *timeout, error.what()),
                         error.missing_instances());
    }
  }
  // One nonblocking collective at a time, each bounded by the timeout (when there is one).
  const auto deadline = detail::Deadline::after(timeout);
  const auto complete = [&](const auto& start, const char* function) {
    std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
    {
      detail::MpiLock lock;
      detail::check_mpi(start(requests.data()), function);
    }
    if (!detail::wait_all(requests, deadline, function)) {
      throw TimeoutError(fmt::format("execute_on_instances over {}: the members did not agree on the outcome within {} s "
                                     "(POPDIST_SYNC_TIMEOUT; {} did not complete)",
                                     detail::format_set(entry.members), *timeout, function),
                         {});
    }
  };

  // A member's position in the sorted members is its rank in the set's communicator; looked up
  // on failure only.
  const int count = static_cast<int>(entry.members.size());
  const int mine =
      failure ? static_cast<int>(detail::position_of(entry.members, detail::runtime_state().rank)) : count;
  int lowest_failed = count;
  complete([&](MPI_Request* request) { return MPI_Iallreduce(&mine, &lowest_failed, 1, MPI_INT, MPI_MIN, entry.comm, request); },
           "MPI_Iallreduce");
  if (lowest_failed == count) return;

  FailureInfo info;
  if (mine == lowest_failed) info = describe_safely(describe, failure);
  int lengths[2] = {static_cast<int>(info.type.size()), static_cast<int>(info.message.size())};
  complete([&](MPI_Request* request) { return MPI_Ibcast(lengths, 2, MPI_INT, lowest_failed, entry.comm, request); },
           "MPI_Ibcast");
  std::string text = info.type + info.message;
  text.resize(static_cast<std::size_t>(lengths[0]) + static_cast<std::size_t>(lengths[1]));
  complete([&](MPI_Request* request) {
    return MPI_Ibcast(text.data(), static_cast<int>(text.size()), MPI_CHAR, lowest_failed, entry.comm, request);
  }, "MPI_Ibcast");
  if (failure) std::rethrow_exception(failure);  // a failing member gets its own exception
  throw RemoteExecutionError(entry.members[static_cast<std::size_t>(lowest_failed)],
                             text.substr(0, static_cast<std::size_t>(lengths[0])),
                             text.substr(static_cast<std::size_t>(lengths[0])));
}

/// The set to run on, through the per-thread lookup cache (lookup.hpp).
template <typename Instances>
Entry& entry_for(const Instances& instances, const detail::Caller& caller) {
  detail::require_initialized(caller.name);
  // To the lookup, no id and no instances mean "the current scope"; here they are an error.
  if (instances.empty()) return detail::registry().find_or_add({}, "", caller.name);
  // Over all instances, however named: the root scope (one set, one barrier), so that a bare
  // synchronize() inside meets participants= or an id outside.
  return detail::barrier_entry(detail::lookup_entry("", instances, caller));
}

bool run_on(Entry& entry, const std::function<void()>& body, const FailureDescriber& describe,
            const detail::Caller& caller) {
  if (!entry.is_member) return false;
  if (entry.abandoned.load(std::memory_order_acquire)) detail::throw_abandoned(entry, caller.name);
  detail::registry().ensure_created(entry, std::nullopt, caller);
  std::exception_ptr failure;
  {
    detail::ScopeGuard scope(entry);
    try {
      body();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  agree_on_outcome(entry, failure, describe);
  return true;
}

}  // namespace

bool execute_on_instances(const InstanceSet& instances, const std::function<void()>& body,
                          const FailureDescriber& describe) {
  return detail::execute_on_instances(instances, body, describe, "execute_on_instances");
}

bool detail::execute_on_instances(const InstanceSet& instances, const std::function<void()>& body,
                                  const FailureDescriber& describe, const Caller& caller) {
  return run_on(entry_for(instances, caller), body, describe, caller);
}

FailureInfo describe_exception(std::exception_ptr failure) { return default_describe(failure); }

}  // namespace popdist
