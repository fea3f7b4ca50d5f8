#pragma once
/// @file runtime.hpp
/// The process-wide context: this process's topology (detected lazily from the process
/// environment, no MPI), the PopDist getters, and the MPI lifecycle (design.md §4).

#include <cstdint>
#include <string>
#include <vector>

#include "popdist/grouping.hpp"
#include "popdist/job_check.hpp"
#include "popdist/topology.hpp"

namespace popdist {

/// This process's topology. Detected from the live environment on first use (throws
/// EnvironmentError for a bad one); after init() it also carries what MPI established
/// (host index, local instance index and count).
[[nodiscard]] const Topology& topology();

// popdist's C++ names for the fields PopDist has getters for, all reading topology(). PopDist's
// own names (getInstanceIndex, ...) are in context.hpp, derived from the field table; a field
// added later needs neither: topology().<field> reads it.
[[nodiscard]] int instance_index();
[[nodiscard]] int num_instances();
[[nodiscard]] int local_instance_index();
[[nodiscard]] int num_local_replicas();
[[nodiscard]] int num_total_replicas();
[[nodiscard]] int replica_index_offset();
[[nodiscard]] int ipus_per_replica();
[[nodiscard]] bool is_uniform_replicas_per_instance();
[[nodiscard]] bool is_popdist_env_set();

/// Initializes the MPI backend; idempotent. Calls MPI_Init_thread(MPI_THREAD_MULTIPLE) only if
/// MPI is not initialized yet, checks the topology against MPI and across instances (reductions
/// whose size does not grow with the number of instances; the job check of job_check.hpp over
/// 64-byte records only when they find something amiss or the replicas are not uniform), and
/// learns the host layout from MPI's shared-memory split. Throws TopologyError (naming instances
/// and values) or MpiError. With POPDIST_SYNC_TIMEOUT set, the exchange is bounded by it
/// (TimeoutError saying what it waited for), and a watchdog ends the process with a message
/// when MPI itself blocks longer (an MPI_Init whose peers died before joining).
void init();

/// True between init() and finalize().
[[nodiscard]] bool is_initialized() noexcept;

/// Frees every communicator popdist owns, and finalizes MPI if init() initialized it.
/// Idempotent; also run at process exit.
void finalize();

/// Ends the whole job at once: MPI_Abort on MPI_COMM_WORLD when MPI is initialized, else
/// std::_Exit. For an uncaught error on one instance (the Python package calls it from its
/// excepthook), so that the others are not left waiting in a collective or in MPI_Finalize.
[[noreturn]] void abort_job(int exit_code) noexcept;

/// Every instance's view (hostnames included), indexed by instance index. Gathered on the first
/// call after init(): that call is collective -- every instance must make it.
[[nodiscard]] const std::vector<InstanceView>& instance_views();

/// The job as `popdist topology --all` shows it: every instance's view and the job check's
/// findings, which are returned, not thrown. Collective: every instance must call it. Starts MPI
/// as init() does when nobody did, and leaves popdist initialized or not as it found it. An
/// instance whose own topology cannot be detected still throws (its own error there, a
/// TopologyError naming it on the others).
struct JobSurvey {
  std::vector<InstanceView> views;
  JobCheck check;
};
[[nodiscard]] JobSurvey survey_job();

/// Every instance's replica range (after init(); before it, derived under uniform replicas).
[[nodiscard]] std::vector<ReplicaRange> replica_ranges();

}  // namespace popdist
