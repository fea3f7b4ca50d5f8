// execute_on_instances (DESIGN.md 5): run on members only, scoped, and agree on the outcome so
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
#include "registry/instance_sets.hpp"
#include "registry/lookup.hpp"
#include "registry/protocols/timed_barrier.hpp"
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

/// Every member learns whether any member failed (one MPI_Allreduce); when one did, every member
/// learns each failure's instance, type and message (MPI_Allgather of lengths, MPI_Allgatherv of
/// the text). Only on failure is more than one collective spent.
///
/// With POPDIST_SYNC_TIMEOUT set, the members first meet in a timed synchronize, which names the
/// members that never finish the body (asleep, stuck in a collective the others left) in a
/// TimeoutError; the agreement itself is then bounded by the same timeout.
void agree_on_outcome(Entry& entry, std::exception_ptr failure, const FailureDescriber& describe) {
  const auto timeout = detail::runtime_state().default_timeout;
  if (timeout) {
    try {
      detail::timed_barrier(entry, *timeout);
    } catch (const TimeoutError& error) {
      // The error names the call the user made (over all instances the members meet in the root
      // scope's barrier, whose own message says "synchronize").
      throw TimeoutError(fmt::format("execute_on_instances over {}: the members did not all finish the function "
                                     "within {} s (POPDIST_SYNC_TIMEOUT): {}",
                                     detail::format_set(entry.members), *timeout, error.what()),
                         error.missing_instances());
    }
  }
  const int failed_here = failure ? 1 : 0;
  int failed_anywhere = 0;
  {
    std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
    {
      detail::MpiLock lock;
      detail::check_mpi(MPI_Iallreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_MAX, entry.comm, requests.data()),
                        "MPI_Iallreduce");
    }
    if (!detail::wait_all(requests, detail::Deadline::after(timeout), "MPI_Iallreduce")) {
      throw TimeoutError(fmt::format("execute_on_instances over {}: the members did not agree on the outcome within {} s "
                                     "(POPDIST_SYNC_TIMEOUT)",
                                     detail::format_set(entry.members), *timeout),
                         {});
    }
  }
  if (failed_anywhere == 0) return;

  FailureInfo info;
  if (failure) info = describe_safely(describe, failure);
  const auto text = info.type + info.message;
  const int mine[3] = {failed_here, static_cast<int>(info.type.size()), static_cast<int>(info.message.size())};
  const auto n = entry.members.size();
  std::vector<int> lengths(3 * n);
  std::vector<int> counts(n);
  std::vector<int> displacements(n);
  std::string all;
  {
    detail::MpiLock lock;
    detail::check_mpi(MPI_Allgather(mine, 3, MPI_INT, lengths.data(), 3, MPI_INT, entry.comm), "MPI_Allgather");
    int offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
      counts[i] = lengths[3 * i + 1] + lengths[3 * i + 2];
      displacements[i] = offset;
      offset += counts[i];
    }
    all.resize(static_cast<std::size_t>(offset));
    detail::check_mpi(MPI_Allgatherv(text.data(), static_cast<int>(text.size()), MPI_CHAR, all.data(), counts.data(),
                                     displacements.data(), MPI_CHAR, entry.comm),
                      "MPI_Allgatherv");
  }
  if (failure) std::rethrow_exception(failure);  // the failing member gets its own exception
  for (std::size_t i = 0; i < n; ++i) {  // the others: the lowest failed instance
    if (lengths[3 * i] == 0) continue;
    const auto start = static_cast<std::size_t>(displacements[i]);
    const auto type_length = static_cast<std::size_t>(lengths[3 * i + 1]);
    const auto message_length = static_cast<std::size_t>(lengths[3 * i + 2]);
    throw RemoteExecutionError(entry.members[i], all.substr(start, type_length),
                               all.substr(start + type_length, message_length));
  }
}

/// The set to run on, through the per-thread lookup cache (lookup.hpp).
template <typename Instances>
Entry& entry_for(const Instances& instances) {
  detail::require_initialized("execute_on_instances");
  // To the lookup, no id and no instances mean "the current scope"; here they are an error.
  if (instances.empty()) return detail::registry().find_or_add({}, "", "execute_on_instances");
  // Over all instances, however named: the root scope (one set, one barrier), so that a bare
  // synchronize() inside meets participants= or an id outside.
  return detail::barrier_entry(detail::lookup_entry("", instances, "execute_on_instances"));
}

bool run_on(Entry& entry, const std::function<void()>& body, const FailureDescriber& describe) {
  if (!entry.is_member) return false;
  if (entry.abandoned.load(std::memory_order_acquire)) detail::throw_abandoned(entry, "execute_on_instances");
  detail::registry().ensure_created(entry, std::nullopt, "execute_on_instances");
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
  return run_on(entry_for(instances), body, describe);
}

FailureInfo describe_exception(std::exception_ptr failure) { return default_describe(failure); }

}  // namespace popdist
